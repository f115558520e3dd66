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
            let pairs = [
                (AppStateProjection().name, "app-state-decodable"), (MessagesProjection().name, "messages-decodable"),
                (AlertsProjection().name, "alerts-decodable"),
            ]
            let runner = try await ProjectionRunner(
                store: f.store,
                projections: [AppStateProjection(), DecodableAppState(), MessagesProjection(), DecodableMessages(), AlertsProjection(), DecodableAlerts()])
            // When all catch up, then all are rebuilt
            try await runner.catchUp()
            var live: [String: String] = [:]
            for (typed, decodable) in pairs {
                live[typed] = try await runner.storedHash(of: typed)
                live[decodable] = try await runner.storedHash(of: decodable)
            }
            let rebuilt = try await runner.rebuild()
            // Then each typed path's state is its Decodable one's, byte for byte, live and rebuilt
            for (typed, decodable) in pairs {
                #expect(live[typed] == live[decodable], "\(typed) caught up")
                #expect(rebuilt.first { $0.projection == typed }?.hash == live[typed], "\(typed) rebuilt")
                #expect(rebuilt.first { $0.projection == decodable }?.hash == live[typed], "\(decodable) rebuilt")
            }
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
