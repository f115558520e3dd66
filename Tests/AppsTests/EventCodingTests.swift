import Apps
import EventStore
import Foundation
import Testing

/// Each app event has one encoding, its Codable form: recorded as JSON in declaration order,
/// read back to the same value, with the documented member names.
@Suite("App events: one encoding, both ways")
struct EventCodingTests {
    func roundTrip<E: EventData & Equatable>(_ event: E, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let new = try event.newEvent()
        #expect(new.type == E.eventType, sourceLocation: sourceLocation)
        #expect(new.schemaVersion == E.schemaVersion, sourceLocation: sourceLocation)
        #expect(String(decoding: new.data, as: UTF8.self) == json, sourceLocation: sourceLocation)
        let recorded = RecordedEvent(
            position: 1, stream: "s", version: 1, id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)), type: new.type,
            data: new.data, metadata: Data(), recordedAtMicroseconds: 0, schemaVersion: new.schemaVersion)
        #expect(try E(recorded: recorded) == event, sourceLocation: sourceLocation)
        // Foundation's decoder reads the same JSON to the same value.
        #expect(try JSONDecoder().decode(E.self, from: new.data) == event, sourceLocation: sourceLocation)
    }

    @Test("every event type, with its JSON")
    func everyEvent() throws {
        let july1 = try #require(CivilDate("2026-07-01"))
        try roundTrip(GoalSet(goal: 400), #"{"goal":400}"#)
        try roundTrip(WorkoutStarted(), "{}")
        try roundTrip(WorkoutPaused(), "{}")
        try roundTrip(WorkoutRestarted(), "{}")
        try roundTrip(PedometerUpdated(steps: 12, distance: 9.5), #"{"steps":12,"distance":9.5}"#)
        try roundTrip(NessieMoved(distance: 3), #"{"distance":3}"#)
        try roundTrip(WorkoutCompleted(), "{}")
        try roundTrip(WorkoutCaught(), "{}")
        try roundTrip(AlertTriggered(alert: .nessie90Percent), #"{"alert":"nessie90Percent"}"#)
        try roundTrip(AlertPosted(alert: AlertName.goalComplete.alert), #"{"name":"goalComplete","text":"Amazing, you did it! Have some 🥧.","severity":"good"}"#)
        try roundTrip(AlertPosted(alert: Alert(text: "free", severity: .bad)), #"{"name":null,"text":"free","severity":"bad"}"#)
        try roundTrip(AlertCleared(text: "free"), #"{"text":"free"}"#)
        try roundTrip(AllAlertsCleared(), "{}")
        try roundTrip(MessagePosted(user: "ann", text: "🎉 Tada!", kind: .countdown), #"{"user":"ann","text":"🎉 Tada!","kind":"countdown"}"#)
        try roundTrip(PresenceChanged(user: "ann", presence: .cameBack), #"{"user":"ann","presence":"cameBack"}"#)
        try roundTrip(CamperAdded(camperId: "C1", fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"),
                      #"{"camperId":"C1","contact":{"fullName":"Johnny Appleseed","phoneNumber":"408-555-1234"}}"#)
        try roundTrip(SiteAdded(number: 15, electricity: true, water: false), #"{"number":15,"electricity":true,"water":false}"#)
        try roundTrip(SiteDeleted(number: 15), #"{"number":15}"#)
        try roundTrip(ReservationRecorded(reservationId: "R1", camperId: "C1", site: 15, dateFrom: july1, nights: -1, status: .invalid, problem: "Invalid number of days"),
                      #"{"reservationId":"R1","camperId":"C1","site":15,"dateFrom":"2026-07-01","nights":-1,"dateTo":"2026-06-30","status":"Invalid","problem":"Invalid number of days"}"#)
        try roundTrip(ReservationRecorded(reservationId: "R2", camperId: "C1", site: 15, dateFrom: july1, nights: 2, status: .reserved, problem: nil),
                      #"{"reservationId":"R2","camperId":"C1","site":15,"dateFrom":"2026-07-01","nights":2,"dateTo":"2026-07-03","status":"Reserved","problem":null}"#)
        try roundTrip(ReservationCancelled(reservationId: "R2"), #"{"reservationId":"R2"}"#)
    }

    @Test("CamperAdded is version 2; a version 1 record (its fields beside the id) upcasts to the same camper, and version 2 data passes unchanged")
    func camperAddedEvolution() throws {
        // Given the campground's upcasters and a CamperAdded recorded in version 1's shape
        let upcasting = try Upcasting(CampgroundUpcasters.all)
        let v1 = RecordedEvent(
            position: 3, stream: "campground-pines", version: 1, id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3)),
            type: "CamperAdded", data: Data(#"{"camperId":"C1","fullName":"Ann Lee","phoneNumber":"555-0100"}"#.utf8), metadata: Data(),
            recordedAtMicroseconds: 7)
        // When it is upcast
        let upcast = try upcasting.upcast(v1)
        // Then it is version 2's shape, keeps its recorded version and everything else, and decodes
        #expect(String(decoding: upcast.data, as: UTF8.self) == #"{"camperId":"C1","contact":{"fullName":"Ann Lee","phoneNumber":"555-0100"}}"#)
        #expect(upcast.schemaVersion == 1 && upcast.type == "CamperAdded" && upcast.position == 3 && upcast.id == v1.id)
        #expect(upcast.recordedAtMicroseconds == 7 && upcast.stream == v1.stream && upcast.version == 1 && upcast.metadata == v1.metadata)
        #expect(try CamperAdded(recorded: upcast) == CamperAdded(camperId: "C1", fullName: "Ann Lee", phoneNumber: "555-0100"))
        // And a version 2 record is not touched, nor is version 2 data recorded as version 1 by hand
        let v2 = try CamperAdded(camperId: "C2", fullName: "Bo", phoneNumber: "1").newEvent()
        let recordedV2 = RecordedEvent(
            position: 4, stream: "campground-pines", version: 2, id: v1.id, type: v2.type, data: v2.data, metadata: Data(),
            recordedAtMicroseconds: 8, schemaVersion: 2)
        #expect(try upcasting.upcast(recordedV2) == recordedV2)
        let mislabelled = RecordedEvent(
            position: 4, stream: "campground-pines", version: 2, id: v1.id, type: v2.type, data: v2.data, metadata: Data(),
            recordedAtMicroseconds: 8)
        #expect(try CamperAdded(recorded: upcasting.upcast(mislabelled)) == CamperAdded(camperId: "C2", fullName: "Bo", phoneNumber: "1"))
    }

    @Test("bad data names the event and what is wrong instead of crashing")
    func badData() throws {
        func recorded(_ type: String, _ json: String) -> RecordedEvent {
            RecordedEvent(
                position: 7, stream: "fitness-ann", version: 1, id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)), type: type,
                data: Data(json.utf8), metadata: Data(), recordedAtMicroseconds: 0)
        }
        let error = #expect(throws: EventDecodingError.self) { try GoalSet(recorded: recorded("GoalSet", #"{"goal":"many"}"#)) }
        #expect(error?.position == 7 && error?.type == "GoalSet")
        #expect(error?.reason.hasPrefix("its data is not a GoalSet") == true)
        #expect(throws: EventDecodingError.self) { try AlertTriggered(recorded: recorded("AlertTriggered", #"{"alert":"nope"}"#)) }
        #expect(throws: EventDecodingError.self) { try ReservationRecorded(recorded: recorded("ReservationRecorded", #"{"reservationId":"R1"}"#)) }
        #expect(throws: EventDecodingError.self) { try SiteAdded(recorded: recorded("SiteAdded", "[]")) }
        #expect(throws: EventDecodingError(stream: "fitness-ann", position: 7, type: "SiteAdded", reason: "it is a SiteAdded, not a GoalSet")) {
            try GoalSet(recorded: recorded("SiteAdded", "{}"))
        }
        #expect(throws: EventDecodingError.self) { try FitnessEvent(recorded: recorded("Mystery", "{}")) }
    }
}
