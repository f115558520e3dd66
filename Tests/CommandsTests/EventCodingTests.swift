import EventStore
import Foundation
import Projections
import Testing

/// Each domain event's stored JSON and its Codable form agree, both ways.
@Suite("Domain events: stored JSON and Codable agree")
struct EventCodingTests {
    func roundTrip<E: DomainEvent>(_ event: E) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let codable = try encoder.encode(event)
        #expect(try E(json: JSONValue(parsing: Array(codable))) == event, "\(E.type): Codable → json")
        #expect(try JSONDecoder().decode(E.self, from: Data(event.json.serialized.utf8)) == event, "\(E.type): json → Codable")
        #expect(event.newEvent.type == E.type)
    }

    @Test("every event type")
    func everyEvent() throws {
        try roundTrip(GoalSet(goal: 400))
        try roundTrip(WorkoutStarted())
        try roundTrip(WorkoutPaused())
        try roundTrip(WorkoutRestarted())
        try roundTrip(PedometerUpdated(steps: 12, distance: 9.5))
        try roundTrip(NessieMoved(distance: 3))
        try roundTrip(WorkoutCompleted())
        try roundTrip(WorkoutCaught())
        try roundTrip(AlertTriggered(alert: .nessie90Percent))
        try roundTrip(AlertPosted(alert: AlertName.goalComplete.alert))
        try roundTrip(AlertPosted(alert: Alert(text: "free", severity: .bad)))
        try roundTrip(AlertCleared(text: "free"))
        try roundTrip(AllAlertsCleared())
        try roundTrip(MessagePosted(user: "ann", text: "🎉 Tada!", kind: .countdown))
        try roundTrip(PresenceChanged(user: "ann", presence: .cameBack))
        try roundTrip(CamperAdded(camperId: "C1", fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"))
        try roundTrip(SiteAdded(number: 15, electricity: true, water: false))
        try roundTrip(SiteDeleted(number: 15))
        try roundTrip(ReservationRecorded(reservationId: "R1", camperId: "C1", site: 15, dateFrom: CivilDate("2026-07-01")!, nights: -1, status: .invalid, problem: "Invalid number of days"))
        try roundTrip(ReservationRecorded(reservationId: "R2", camperId: "C1", site: 15, dateFrom: CivilDate("2026-07-01")!, nights: 2, status: .reserved, problem: nil))
        try roundTrip(ReservationCancelled(reservationId: "R2"))
    }

    @Test("bad data names what is wrong instead of crashing")
    func badData() {
        #expect(throws: DomainDataError("GoalSet needs \"goal\" as an integer")) { try GoalSet(json: ["goal": "many"]) }
        #expect(throws: DomainDataError.self) { try AlertTriggered(json: ["alert": "nope"]) }
        #expect(throws: DomainDataError.self) { try ReservationRecorded(json: ["reservationId": "R1"]) }
        #expect(throws: DomainDataError.self) { try SiteAdded(json: .array([])) }
    }
}
