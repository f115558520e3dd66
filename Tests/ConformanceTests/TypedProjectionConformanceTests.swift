import Apps
import Commands
import EventStore
import EventStoreTesting
import Foundation
import Projections
import Testing

/// `AppStateProjection` with the decoding it had before its typed fast path: each event copied
/// into a `RecordedEvent` and decoded through `Decodable`, then folded by the projection's own
/// `apply`. The reference its fast path (events read in place, decoded by hand) must fold alike.
private struct DecodableAppState: Projection {
    let name = "app-state-decodable"
    let version = 3
    let tables = ["workouts"]
    let eventTypes: Set<String>? = FitnessEvent.types.union([StreamDeletion.eventType])
    let errorPolicy = ProjectionErrorPolicy.skip
    let queryParameters: [QueryParameter] = []

    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        if event.type == StreamDeletion.eventType {
            if let key = AppStreams.deletedRowKey(event, prefix: AppStreams.fitnessPrefix) { try AppStateProjection().apply(.deleted(key), to: &state) }
            return
        }
        guard let key = AppStreams.rowKey(of: event.stream, prefix: AppStreams.fitnessPrefix) else { return }
        try AppStateProjection().apply(.event(key, try FitnessEvent(recorded: event)), to: &state)
    }

    func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue { .null }
}

/// `MessagesProjection` with the decoding it had before its typed fast path, the same way.
private struct DecodableMessages: Projection {
    let name = "messages-decodable"
    let version = 4
    let tables = ["messages", "newest", "seen", "recent"]
    let eventTypes: Set<String>? = ChatEvent.types
    let errorPolicy = ProjectionErrorPolicy.skip
    let queryParameters: [QueryParameter] = []

    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let room = AppStreams.rowKey(of: event.stream, prefix: AppStreams.chatPrefix) else { return }
        let posted = MessagesProjection.Posted(
            room: room, event: try ChatEvent(recorded: event), position: event.position, id: event.id, at: event.recordedAtMicroseconds)
        try MessagesProjection().apply(posted, to: &state)
    }

    func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue { .null }
}

/// `AlertsProjection` with the decoding it had before its typed fast path, the same way.
private struct DecodableAlerts: Projection {
    let name = "alerts-decodable"
    let version = 3
    let tables = ["queues"]
    let eventTypes: Set<String>? = AlertEvent.types.union([StreamDeletion.eventType])
    let errorPolicy = ProjectionErrorPolicy.skip
    let queryParameters: [QueryParameter] = []

    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        if event.type == StreamDeletion.eventType {
            if let key = AppStreams.deletedRowKey(event, prefix: AppStreams.alertsPrefix) { try AlertsProjection().apply(.deleted(key), to: &state) }
            return
        }
        guard let key = AppStreams.rowKey(of: event.stream, prefix: AppStreams.alertsPrefix) else { return }
        try AlertsProjection().apply(.event(key, try AlertEvent(recorded: event)), to: &state)
    }

    func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue { .null }
}

/// The campground's rows as they were before the typed fast path: `Codable`, their row bytes
/// derived from it.
private struct CodableCamper: Codable, RowValue {
    var id: String
    var fullName: String
    var phoneNumber: String
}

private struct CodableCampsite: Codable, RowValue {
    var number: Int
    var electricity: Bool
    var water: Bool
}

private struct CodableReservation: Codable, RowValue {
    var id: String
    var camperId: String
    var site: Int
    var dateFrom: CivilDate
    var dateTo: CivilDate
    var status: ReservationStatus
    var problem: String?
}

/// The key of a campground's row as the projections made it before their typed fast path.
private func oldCampgroundKey(_ event: RecordedEvent) -> RowKey? {
    AppStreams.key(of: event.stream, prefix: AppStreams.campgroundPrefix).map { RowKey($0) }
}

private func oldIdKey(_ campground: RowKey, _ id: String) -> RowKey {
    campground.appending(Int(id.dropFirst()) ?? Int.max).appending(id)
}

/// One of the campground's three projections as it was before its typed fast path, whole: each
/// event decoded through `Decodable` by its own type, keys made from the stream's name as a
/// string, rows written through `Codable`. The reference its fast path must fold alike.
private struct OldCampgroundProjection: Projection {
    let name: String
    let version = 3
    let tables: [String]
    let eventTypes: Set<String>?
    let errorPolicy = ProjectionErrorPolicy.skip
    let queryParameters: [QueryParameter] = []

    static let campers = OldCampgroundProjection(name: "campers-decodable", tables: ["campers"], eventTypes: [CamperAdded.eventType])
    static let sites = OldCampgroundProjection(name: "campsites-decodable", tables: ["sites"], eventTypes: [SiteAdded.eventType, SiteDeleted.eventType])
    static let reservations = OldCampgroundProjection(
        name: "reservations-decodable", tables: ["reservations"], eventTypes: [ReservationRecorded.eventType, ReservationCancelled.eventType])

    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let campground = oldCampgroundKey(event) else { return }
        switch event.type {
        case CamperAdded.eventType:
            let added = try CamperAdded(recorded: event)
            try state.put(
                "campers", oldIdKey(campground, added.camperId),
                CodableCamper(id: added.camperId, fullName: added.fullName, phoneNumber: added.phoneNumber))
        case SiteAdded.eventType:
            let added = try SiteAdded(recorded: event)
            try state.put("sites", campground.appending(added.number), CodableCampsite(number: added.number, electricity: added.electricity, water: added.water))
        case SiteDeleted.eventType:
            try state.delete("sites", campground.appending(try SiteDeleted(recorded: event).number))
        case ReservationRecorded.eventType:
            let recorded = try ReservationRecorded(recorded: event)
            try state.put(
                "reservations", oldIdKey(campground, recorded.reservationId),
                CodableReservation(
                    id: recorded.reservationId, camperId: recorded.camperId, site: recorded.site, dateFrom: recorded.dateFrom, dateTo: recorded.dateTo,
                    status: recorded.status, problem: recorded.problem))
        default:
            let cancelled = try ReservationCancelled(recorded: event)
            let key = oldIdKey(campground, cancelled.reservationId)
            guard var reservation = try state.get("reservations", key, as: CodableReservation.self) else { return }
            reservation.status = .cancelled
            try state.put("reservations", key, reservation)
        }
    }

    func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue { .null }
}

/// Catches up a runner of each pair's typed projection and its reference, then rebuilds them
/// all, and expects each typed projection's state hash to be its reference's, caught up and
/// rebuilt (names differ; hashes cover the tables' rows alone). Returns the runner.
private func expectFoldedAlike(
    _ store: any EventLog, _ pairs: [(typed: any Projection, reference: any Projection)], sourceLocation: SourceLocation = #_sourceLocation
) async throws -> ProjectionRunner {
    let runner = try await ProjectionRunner(store: store, projections: pairs.flatMap { [$0.typed, $0.reference] })
    try await runner.catchUp()
    var live: [String: String] = [:]
    for (typed, reference) in pairs {
        live[typed.name] = try await runner.storedHash(of: typed.name)
        live[reference.name] = try await runner.storedHash(of: reference.name)
    }
    let rebuilt = try await runner.rebuild()
    for (typed, reference) in pairs.map({ ($0.typed.name, $0.reference.name) }) {
        #expect(live[typed] == live[reference], "\(typed) caught up", sourceLocation: sourceLocation)
        #expect(rebuilt.first { $0.projection == typed }?.hash == live[typed], "\(typed) rebuilt", sourceLocation: sourceLocation)
        #expect(rebuilt.first { $0.projection == reference }?.hash == live[typed], "\(reference) rebuilt", sourceLocation: sourceLocation)
    }
    return runner
}

@Suite("Typed projections fold as their Decodable selves, on every backend")
struct TypedProjectionConformanceTests {
    /// Events of workout streams that the apps never write: odd shapes, bad data, a deleted
    /// stream. The typed path must decode, pass over and record them exactly as before.
    static let oddEvents: [(stream: String, type: String, data: String)] = [
        ("fitness-eve", PedometerUpdated.eventType, #"{"distance":2.5,"steps":3,"more":[1,{"a":null}]}"#),
        ("fitness-eve", PedometerUpdated.eventType, #"{"st\u0065ps":4,"distance":1}"#),
        ("fitness-eve", PedometerUpdated.eventType, #"{"steps":3.5,"distance":1}"#),
        ("fitness-eve", PedometerUpdated.eventType, #"{"steps":3}"#),
        ("fitness-eve", PedometerUpdated.eventType, #"{"steps":9223372036854775808,"distance":1}"#),
        ("fitness-eve", NessieMoved.eventType, #"{"distance":"far"}"#),
        ("fitness-eve", GoalSet.eventType, #"{ "goal" : 40 }"#),
        ("fitness-eve", WorkoutStarted.eventType, #"{"x":1}"#),
        ("fitness-eve", WorkoutPaused.eventType, "[]"),
        ("fitness-eve", AlertTriggered.eventType, #"{"alert":"nope"}"#),
        ("fitness-eve", AlertTriggered.eventType, #"{"alert":"goal\u0043omplete"}"#),
        ("fitness-", PedometerUpdated.eventType, #"{"steps":1,"distance":1}"#),
        ("fitness-gone", GoalSet.eventType, #"{"goal":5}"#),
        ("other-stream", PedometerUpdated.eventType, #"{"steps":1,"distance":1}"#),
        ("chat-odd", MessagePosted.eventType, #"{"kind":"said","text":"hi","user":"eve","more":1}"#),
        ("chat-odd", MessagePosted.eventType, #"{"user":"eve","text":"hi","kind":"shouted"}"#),
        ("chat-odd", PresenceChanged.eventType, #"{"us\u0065r":"eve","presence":"cameBack"}"#),
        ("chat-odd", PresenceChanged.eventType, #"{"user":"eve"}"#),
        ("chat-", MessagePosted.eventType, #"{"user":"eve","text":"hi","kind":"said"}"#),
        ("alerts-eve", AlertPosted.eventType, #"{"severity":"bad","text":"Stretch!","name":null}"#),
        ("alerts-eve", AlertPosted.eventType, #"{"text":"x","severity":"ugly"}"#),
        ("alerts-eve", AlertCleared.eventType, #"{"te\u0078t":"Stretch!"}"#),
        ("alerts-gone", AlertPosted.eventType, #"{"text":"x","severity":"good"}"#),
    ]

    @Test("app-state, messages and alerts by their typed paths and by Decodable: the same hashes, caught up and rebuilt", arguments: Backend.allCases)
    func alike(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            // Given the apps' seeded traffic, odd events in workout and chat streams, a deleted
            // workout stream and a chat user forgotten
            try await domainTraffic(f.backend, clock: f.clock, seed: 5, steps: 150)
            for odd in Self.oddEvents {
                _ = try await f.store.append(to: odd.stream, events: [NewEvent(type: odd.type, data: Data(odd.data.utf8))])
            }
            _ = try await f.store.deleteStream("fitness-gone", expectedVersion: .any, hard: false)
            _ = try await f.store.deleteStream("alerts-gone", expectedVersion: .any, hard: false)
            _ = try await f.backend.chat(.say("bye"), user: "ann", room: "main")
            _ = try await f.store.forget(MessagePosted.subject("ann"))
            // When each typed path and its Decodable self catch up, then are rebuilt
            // Then each typed path's state is its Decodable one's, byte for byte, live and rebuilt
            let runner = try await expectFoldedAlike(
                f.store, [(AppStateProjection(), DecodableAppState()), (MessagesProjection(), DecodableMessages()), (AlertsProjection(), DecodableAlerts())])
            let head = try await f.store.headPosition()
            // (app-state: steps 3.5, no distance, steps past Int.max, distance "far", alert "nope";
            // `[]` decodes as WorkoutPaused, whose synthesized init reads nothing. messages: kind
            // "shouted", a presence without one.)
            #expect(try await runner.state(of: "app-state", asOf: head).reader.rowCount(PassedOver.table) == 5)
            #expect(try await runner.state(of: "messages", asOf: head).reader.rowCount(PassedOver.table) == 2)
            // (alerts: severity "ugly")
            #expect(try await runner.state(of: "alerts", asOf: head).reader.rowCount(PassedOver.table) == 1)
        }
    }

    /// Events of campground streams that the apps never write: odd shapes, bad data, a camper
    /// in the first version's shape (upcast on the way), keys with escapes, other streams.
    static let oddCampgroundEvents: [(stream: String, type: String, data: String)] = [
        ("campground-odd", CamperAdded.eventType, #"{"more":[1],"contact":{"phoneNumber":"1","fullName":"Eve","x":null},"camperId":"C1"}"#),
        ("campground-odd", CamperAdded.eventType, #"{"camperId":"C2","fullName":"Old","phoneNumber":"2"}"#),
        ("campground-odd", CamperAdded.eventType, #"{"camperId":"C3","contact":{"fullName":1,"phoneNumber":"3"}}"#),
        ("campground-odd", CamperAdded.eventType, #"{"c\u0061mperId":"C4","contact":{"fullName":"Al","phoneNumber":"4"}}"#),
        ("campground-odd", CamperAdded.eventType, #"{"camperId":"C5","contact":{"fullName":"T\u00e9a \"T\"","phoneNumber":"5"}}"#),
        ("campground-odd", SiteAdded.eventType, #"{"number":3,"electricity":"yes","water":false}"#),
        ("campground-odd", SiteAdded.eventType, #"{"water":true,"number":4,"electricity":false}"#),
        ("campground-odd", SiteAdded.eventType, #"{"number":9223372036854775807,"electricity":true,"water":true}"#),
        ("campground-odd", SiteAdded.eventType, #"{"number":5,"number":6,"electricity":true,"water":true}"#),
        ("campground-odd", SiteDeleted.eventType, #"{"number":4.5}"#),
        ("campground-odd", SiteDeleted.eventType, #"{"number":9223372036854775807}"#),
        ("campground-odd", ReservationRecorded.eventType, #"{"reservationId":"R1","camperId":"C1","site":3,"dateFrom":"2026-02-30","nights":1,"status":"Reserved"}"#),
        ("campground-odd", ReservationRecorded.eventType, #"{"reservationId":"R2","camperId":"C1","site":3,"dateFrom":"2026-02-03","nights":2,"status":"Reserved","problem":null,"dateTo":"x"}"#),
        ("campground-odd", ReservationRecorded.eventType, #"{"reservationId":"Rx","camperId":"C1","site":3,"dateFrom":"2026-02-03","nights":-2,"status":"Invalid","problem":"taken"}"#),
        ("campground-odd", ReservationRecorded.eventType, #"{"reservationId":"R3","camperId":"C1","site":3,"dateFrom":"2026-02-03","nights":2,"status":"Maybe"}"#),
        ("campground-odd", ReservationRecorded.eventType, #"{"reservationId":"R4","camperId":"C1","site":3,"dateFrom":"2026-02-03","nights":2,"status":"Reserved","problem":7}"#),
        ("campground-odd", ReservationCancelled.eventType, #"{"reservationId":"R2"}"#),
        ("campground-odd", ReservationCancelled.eventType, #"{"reservationId":"R9"}"#),
        ("campground-odd", ReservationCancelled.eventType, #"{"reservationId":2}"#),
        ("campground-", SiteAdded.eventType, #"{"number":1,"electricity":true,"water":true}"#),
        // (a combining mark after the "-" makes it another character: no campground's stream,
        // as the projections had it; "é" is one of its own: campground "é")
        ("campground-\u{0301}x", SiteAdded.eventType, #"{"number":1,"electricity":true,"water":true}"#),
        ("campground-\u{200D}x", SiteAdded.eventType, #"{"number":"bad","electricity":true,"water":true}"#),
        ("campground-é", SiteAdded.eventType, #"{"number":2,"electricity":true,"water":true}"#),
        ("campground-é", SiteAdded.eventType, #"{"number":"bad","electricity":true,"water":true}"#),
        ("other-stream", SiteAdded.eventType, #"{"number":1,"electricity":true,"water":true}"#),
    ]

    @Test("the campground's three projections by their typed paths and as they were: the same hashes, caught up and rebuilt", arguments: Backend.allCases)
    func campgroundAlike(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            // Given the apps' seeded traffic, odd events in a campground's stream and a camper forgotten
            try await domainTraffic(f.backend, clock: f.clock, seed: 7, steps: 200)
            for odd in Self.oddCampgroundEvents {
                _ = try await f.store.append(to: odd.stream, events: [NewEvent(type: odd.type, data: Data(odd.data.utf8))])
            }
            _ = try await f.store.forget(CamperAdded.subject("C1"))
            // When each typed path and the projection as it was catch up, then are rebuilt
            // Then each typed path's state is the old one's, byte for byte, live and rebuilt
            let runner = try await expectFoldedAlike(
                f.store,
                [
                    (CampersProjection(), OldCampgroundProjection.campers), (CampsitesProjection(), OldCampgroundProjection.sites),
                    (ReservationsProjection(), OldCampgroundProjection.reservations),
                ])
            let head = try await f.store.headPosition()
            // (campers: a full name of 1. sites: electricity "yes", a number 4.5, campground é's
            // number "bad"; not the joined name's. reservations:
            // February 30th, status "Maybe", a problem of 7, an id of 2.)
            #expect(try await runner.state(of: "campers", asOf: head).reader.rowCount(PassedOver.table) == 1)
            #expect(try await runner.state(of: "campsites", asOf: head).reader.rowCount(PassedOver.table) == 3)
            #expect(try await runner.state(of: "reservations", asOf: head).reader.rowCount(PassedOver.table) == 4)
            // And the odd campground's campers are there: C1, C2 (upcast), C4 (its key escaped) and C5
            let campers = try await runner.query("campers", parameters: ["campground": "odd"])
            #expect(campers.arrayValue?.count == 4, "\(campers)")
            // And campground é has its site; the names the mark joins have none
            let sites = try await runner.query("campsites", parameters: ["campground": "é"])
            #expect(sites["sites"]?.arrayValue?.count == 1, "\(sites)")
            for joined in ["\u{0301}x", "\u{200D}x"] {
                let none = try await runner.query("campsites", parameters: ["campground": joined])
                #expect(none["sites"]?.arrayValue?.isEmpty == true, "\(none)")
            }
        }
    }

    @Test("an upcaster failing mid-page: the events before it and after it are applied on both paths, on every backend", arguments: Backend.allCases)
    func upcasterFailingMidPage(_ backend: Backend) async throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "no 13" } }
        let refusing = Upcaster(PedometerUpdated.eventType, from: 1) { data in
            if data["steps"]?.intValue == 13 { throw Refused() }
            return data
        }
        try await withLog(backend, upcasters: [refusing]) { f in
            // Given a workout whose third report of steps the upcaster refuses, all in one page
            let reports = [1, 2, 13, 4].map { PedometerUpdated(steps: $0, distance: Double($0)) }
            let events = try ([FitnessEvent.goalSet(GoalSet(goal: 100)), .started(WorkoutStarted())] + reports.map(FitnessEvent.pedometer)).map { try $0.newEvent() }
            _ = try await f.log.append(to: AppStreams.fitness("eve"), events: events)
            // When both paths catch up
            let runner = try await ProjectionRunner(store: f.log, projections: [AppStateProjection(), DecodableAppState()])
            try await runner.catchUp()
            // Then both applied the reports before and after the refused one, and passed it over
            #expect(try await runner.storedHash(of: "app-state") == (try await runner.storedHash(of: "app-state-decodable")))
            let state = try await runner.query("app-state", parameters: ["user": "eve"])
            #expect(state["steps"] == .int(7), "\(state)")
            let passed = try await runner.read("app-state") { state in try await state.rows(PassedOver.table, as: String.self).map(\.value) }
            #expect(passed == ["The upcaster of PedometerUpdated from version 1 failed on the event at position 5 ('fitness-eve'): no 13."])
        }
    }
}
