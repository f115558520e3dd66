import Apps
import Commands
@testable import EventStoreCore
@testable import EventStoreLMDB
import EventStoreTesting
import Foundation
import Projections
import Testing
import TestSupport

/// The steps these tests register: `Noted` 1 → 2 renames `name` to `title`, 2 → 3 adds
/// `count: 1`; `OldThing` 1 becomes `NewThing` 2; `ItemAddedOld` 1 becomes the todo list's
/// `ItemAdded` 2.
enum TestUpcasters {
    static let title = Upcaster("Noted", from: 1) { data in
        guard case let .object(members) = data else { return data }
        return .object(members.map { $0.0 == "name" ? ("title", $0.1) : $0 })
    }
    static let count = Upcaster("Noted", from: 2) { data in
        guard case let .object(members) = data, !members.contains(where: { $0.0 == "count" }) else { return data }
        return .object(members + [("count", 1)])
    }
    static let newThing = Upcaster("OldThing", from: 1, renamingTo: "NewThing") { $0 }
    static let itemAdded = Upcaster("ItemAddedOld", from: 1, renamingTo: "ItemAdded") { $0 }
    static let all = [title, count, newThing, itemAdded]
}

/// The titles of the `Noted` events, in position order.
struct Titles: Projection {
    var name = "titles"
    let version = 1
    let tables = ["titles"]
    let eventTypes: Set<String>? = ["Noted"]
    var errorPolicy = ProjectionErrorPolicy.stop
    let queryParameters: [QueryParameter] = []

    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        let data = try JSONValue(parsing: Array(event.data))
        try state.put("titles", RowKey(event.position), "\(data["title"]?.stringValue ?? "?")×\(data["count"]?.intValue ?? 0)")
    }

    func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        .array(try await state.rows("titles", as: String.self).map { .string($0.value) })
    }
}

/// How many `Other` events there are.
struct Others: Projection {
    let name = "others"
    let version = 1
    let tables = ["count"]
    let eventTypes: Set<String>? = ["Other"]
    let errorPolicy = ProjectionErrorPolicy.stop
    let queryParameters: [QueryParameter] = []

    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        try state.put("count", RowKey("n"), (try state.get("count", RowKey("n"), as: Int.self) ?? 0) + 1)
    }

    func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        .int(Int64(try await state.get("count", RowKey("n"), as: Int.self) ?? 0))
    }
}

@Suite("Upcasting: one decode pipeline on every read path, on every backend")
struct UpcastingConformanceTests {
    func evolved(_ type: String, _ json: String, id: UUID? = nil, schemaVersion: UInt16 = 1) -> NewEvent {
        NewEvent(id: id, type: type, data: Data(json.utf8), schemaVersion: schemaVersion)
    }

    /// Each event as "TYPE@RECORDED-VERSION DATA".
    func shown(_ events: [RecordedEvent]) -> [String] {
        events.map { "\($0.type)@\($0.schemaVersion) \(String(decoding: $0.data, as: UTF8.self))" }
    }

    /// Records, without upcasters, events of every version: Noted 1, 2 and 3, an OldThing and an Other.
    func recordHistory(_ f: LogFixture, id: UUID) async throws {
        _ = try await f.log.append(to: "list-1", events: [
            evolved("Noted", #"{"name":"pen"}"#, id: id), evolved("Noted", #"{"title":"ink"}"#, schemaVersion: 2),
            evolved("OldThing", #"{"x":1}"#), evolved("Noted", #"{"title":"cap","count":2}"#, schemaVersion: 3),
        ])
        _ = try await f.log.append(to: "other-1", events: [evolved("Other", "{}")])
    }

    let upcast = [
        #"Noted@1 {"title":"pen","count":1}"#, #"Noted@2 {"title":"ink","count":1}"#, #"NewThing@1 {"x":1}"#,
        #"Noted@3 {"title":"cap","count":2}"#, "Other@1 {}",
    ]

    @Test("records written before a type evolved come out upcast through every read path, keeping their recorded version", arguments: Backend.allCases)
    func everyReadPath(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a history recorded in every version, and a store reopened with the upcasters
            let id = UUID()
            try await recordHistory(f, id: id)
            try await f.reopen(upcasters: TestUpcasters.all)
            // When it is read through every path, then every event has its newest shape
            #expect(shown(try await f.log.events()) == upcast, "read")
            #expect(shown(try await f.log.events(of: "list-1")) == Array(upcast.prefix(4)), "readStream forward")
            #expect(shown(try await f.log.events(of: "list-1", direction: .backward)) == upcast.prefix(4).reversed(), "readStream backward")
            #expect(shown(try await f.log.event(at: 3).map { [$0] } ?? []) == [upcast[2]], "event(at:)")
            #expect(shown(try await f.log.event(withID: id).map { [$0] } ?? []) == [upcast[0]], "event(withID:)")
            #expect(shown(try await f.log.read(.all, after: 0, limit: 100).events) == upcast, "read(_:after:limit:)")
            var inPlace: [RecordedEvent] = []
            _ = try await f.log.forEachEvent(matching: .all, after: 0, limit: 100) { inPlace.append($0.recordedEvent()) }
            #expect(shown(inPlace) == upcast, "forEachEvent(matching:)")
            var paged: [RecordedEvent] = []
            for try await event in f.log.events(from: 1, through: .max, filter: .all, pageSize: 2) { paged.append(event) }
            #expect(shown(paged) == upcast, "events(from:) pages")
            let collector = EventCollector(f.log.subscription(from: .start))
            #expect(shown(try await collector.take(5, within: .seconds(30))) == upcast, "subscription catch-up")
            _ = try await f.log.append(to: "list-1", events: [evolved("Noted", #"{"name":"nib"}"#)])
            let live = [#"Noted@1 {"title":"nib","count":1}"#]
            #expect(shown(try await collector.take(1, within: .seconds(30))) == live, "subscription live")
            // And table transactions (projections, rebuilds, as-of queries and the handler's loads read there)
            let inTables = try await f.log.readTables { txn in
                var byStream: [RecordedEvent] = []
                try await txn.forEachEvent(inStream: "list-1") { byStream.append($0) }
                var byPosition: [RecordedEvent] = []
                try await txn.forEachEvent(from: 1) { byPosition.append($0); return true }
                return (byStream, byPosition)
            }
            #expect(shown(inTables.0) == Array(upcast.prefix(4)) + live, "forEachEvent(inStream:)")
            #expect(shown(inTables.1) == upcast + live, "forEachEvent(from:)")
            // And verify, which checks the stored bytes, finds nothing wrong
            let report = try await f.log.verify()
            #expect(report.isClean, "\(report.problems)")
        }
    }

    @Test("a filter by type reads a renamed type under its new name only, on every filtered path", arguments: Backend.allCases)
    func renamedTypes(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given an OldThing recorded before it became NewThing
            try await recordHistory(f, id: UUID())
            try await f.reopen(upcasters: TestUpcasters.all)
            let newThing = EventFilter(types: ["NewThing"])
            // When the log is read for NewThing, then the old record comes, renamed
            #expect(shown(try await f.log.events(filter: newThing)) == [upcast[2]], "read")
            var paged: [RecordedEvent] = []
            for try await event in f.log.events(from: 1, through: .max, filter: newThing, pageSize: 1) { paged.append(event) }
            #expect(shown(paged) == [upcast[2]], "events(from:) pages")
            let collector = EventCollector(f.log.subscription(from: .start, filter: newThing))
            #expect(shown(try await collector.take(1, within: .seconds(30))) == [upcast[2]], "subscription")
            let inTables = try await f.log.readTables { txn in
                var seen: [RecordedEvent] = []
                try await txn.forEachEvent(from: 1, types: ["NewThing", "Other"]) { seen.append($0); return true }
                return seen
            }
            #expect(shown(inTables) == [upcast[2], upcast[4]], "forEachEvent(from:types:)")
            // And its old name matches nothing any more: no reader sees an OldThing, and a page
            // whose first row was one is filled from the rows after it
            #expect(try await f.log.events(filter: EventFilter(types: ["OldThing"])).isEmpty)
            #expect(shown(try await f.log.events(limit: 1, filter: EventFilter(types: ["OldThing", "Other"]))) == [upcast[4]])
            // And without upcasters the store reads it as stored
            try await f.reopen(upcasters: [])
            #expect(shown(try await f.log.events(filter: EventFilter(types: ["OldThing"]))) == [#"OldThing@1 {"x":1}"#])
            #expect(try await f.log.events(filter: newThing).isEmpty)
        }
    }

    @Test("a gap in a chain, a chain that starts late, a step registered twice: the store does not open, and says which", arguments: Backend.allCases)
    func chainGaps(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await recordHistory(f, id: UUID())
            let step = { (from: UInt16) in Upcaster("Noted", from: from) { $0 } }
            let cases: [([Upcaster], String)] = [
                ([step(1), step(3)], "The upcasters of 'Noted' have a gap: none goes from version 2 to 3, so events of that version would read in an old shape; register it."),
                ([step(2)], "The upcasters of 'Noted' start at version 2, but its events start at version 1: register the steps from 1 to 2."),
                ([step(1), step(1)], "Two upcasters of 'Noted' start at version 1; register one."),
                ([step(0)], "The upcaster of 'Noted' from version 0 is out of range: versions go from 1 to 65535."),
                ([Upcaster("Noted", from: 1, renamingTo: "Noted") { $0 }], "An upcaster of 'Noted' has an empty type name or renames the type to itself."),
                (
                    [Upcaster("A", from: 1, renamingTo: "B") { $0 }, Upcaster("C", from: 1) { $0 }, Upcaster("C", from: 2, renamingTo: "B") { $0 }],
                    "Steps rename types into 'B' at versions 2 and 3, and it has no steps from 2 on: register them."
                ),
            ]
            for (upcasters, message) in cases {
                // When the store is opened with a broken chain, then it refuses with one sentence
                let error = await #expect(throws: EventStoreError.self) { try await f.reopen(upcasters: upcasters) }
                #expect(error?.code == .invalidInput)
                #expect(error?.message == message)
            }
            // And the store is unchanged: it opens without them
            try await f.reopen(upcasters: [])
            #expect(try await f.log.headPosition() == 5)
        }
    }

    @Test("the apps refuse a store opened without the upcasters of their evolved types; the handler refuses to write a version its store cannot bring old events to", arguments: Backend.allCases)
    func typedAPIChecksReach(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a store without upcasters, when the apps' backend opens on it, then it refuses
            let error = #expect(throws: EventStoreError.self) { try AppBackend(store: f.log) }
            #expect(error?.code == .invalidInput)
            #expect(
                error?.message
                    == "'CamperAdded' is written in version 2, but the store's upcasters bring older 'CamperAdded' events only to version 1; open the store with the upcasters of every version (StoreConfiguration.upcasters).")
            // And a handler that decides a CamperAdded (version 2) writes nothing
            let handler = CommandHandler(store: f.log)
            await #expect(throws: EventStoreError.self) {
                try await handler.handle(.addCamper(fullName: "Ann", phoneNumber: "1"), with: CampgroundDecider(campground: "pines"))
            }
            #expect(try await f.log.headPosition() == 0)
            // And with the apps' upcasters both work
            try await f.reopen(upcasters: AppCatalog.upcasters)
            let outcome = try await AppBackend(store: f.log).campground(.addCamper(fullName: "Ann", phoneNumber: "1"), campground: "pines")
            #expect(outcome.camper?.id == "C1")
            #expect(outcome.recorded.map(\.schemaVersion) == [2])
        }
    }

    @Test("an upcaster that throws makes the read fail with upcastFailed, naming the event; other reads go on", arguments: Backend.allCases)
    func throwingUpcaster(_ backend: Backend) async throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "no" } }
        try await withLog(backend) { f in
            try await recordHistory(f, id: UUID())
            try await f.reopen(upcasters: [Upcaster("OldThing", from: 1) { _ in throw Refused() }])
            let error = await #expect(throws: EventStoreError.self) { try await f.log.events() }
            #expect(error?.code == .upcastFailed)
            #expect(error?.message == "The upcaster of OldThing from version 1 failed on the event at position 3 ('list-1'): no.")
            #expect(try await f.log.event(at: 2)?.type == "Noted")
        }
    }

    @Test("an upcaster that throws stops a projection of the .stop policy there, and is passed over by one of .skip", arguments: Backend.allCases)
    func throwingUpcasterInProjections(_ backend: Backend) async throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "no pens" } }
        try await withLog(backend) { f in
            // Given a step that refuses the first Noted (a pen)
            try await recordHistory(f, id: UUID())
            let refusing = Upcaster("Noted", from: 1) { data in
                if data["name"]?.stringValue == "pen" { throw Refused() }
                return data
            }
            try await f.reopen(upcasters: [refusing, TestUpcasters.count, TestUpcasters.newThing, TestUpcasters.itemAdded])
            // When a projection of each policy catches up
            let skipping = Titles(name: "titles-skip", errorPolicy: .skip)
            let stopping = Titles(name: "titles-stop", errorPolicy: .stop)
            let runner = try await ProjectionRunner(store: f.log, projections: [skipping, stopping, Others()])
            let error = await #expect(throws: ProjectionError.self) { try await runner.catchUp() }
            // Then the stopping one says where and what to do; the skipping one went on; Others too
            #expect(error?.position == 1)
            #expect(error?.message.contains("Fix the upcaster") == true, "\(String(describing: error))")
            #expect(try await runner.query("titles-skip") == ["ink×1", "cap×2"])
            #expect(try await runner.query("others") == 1)
            let passed = try await runner.read("titles-skip") { state in try await state.rows(PassedOver.table, as: String.self).map(\.value) }
            #expect(passed == ["The upcaster of Noted from version 1 failed on the event at position 1 ('list-1'): no pens."])
        }
    }

    @Test("a new upcaster rebuilds, in the shadow, exactly the projections that consume its type; the others keep their state", arguments: Backend.allCases)
    func rebuildsOnlyConsumers(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given both projections built on the history without upcasters (Noted read as stored)
            try await recordHistory(f, id: UUID())
            let first = try await ProjectionRunner(store: f.log, projections: [Titles(), Others()])
            _ = try await first.catchUp()
            #expect(try await first.query("titles") == ["?×0", "ink×0", "cap×2"])
            let othersHash = try await first.storedHash(of: "others")
            // When the store reopens with the upcasters
            try await f.reopen(upcasters: TestUpcasters.all)
            let second = try await ProjectionRunner(store: f.log, projections: [Titles(), Others()])
            // Then only the consumer of Noted is rebuilt, and it holds the upcast events
            #expect(second.notices == ["Projection 'titles' reads event types whose upcasters changed; rebuilding it."])
            #expect(try await second.query("titles") == ["pen×1", "ink×1", "cap×2"])
            #expect(try await second.storedHash(of: "others") == othersHash)
            #expect(try await second.query("others") == 1)
            // And as-of queries fold upcast events too
            #expect(try await second.query("titles", asOf: 2) == ["pen×1", "ink×1"])
            // And the next open finds nothing to rebuild; a rebuild gives the live state
            try await f.reopen(upcasters: TestUpcasters.all)
            let third = try await ProjectionRunner(store: f.log, projections: [Titles(), Others()])
            #expect(third.notices.isEmpty)
            let live = try await third.storedHash(of: "titles")
            let rebuilt = try await third.rebuild(["titles"])
            #expect(rebuilt.map(\.hash) == [live])
            // And a new revision of a step of another type (OldThing) rebuilds nothing
            var revised = TestUpcasters.all
            revised[2] = Upcaster("OldThing", from: 1, renamingTo: "NewThing", revision: 2) { $0 }
            try await f.reopen(upcasters: revised)
            #expect(try await ProjectionRunner(store: f.log, projections: [Titles(), Others()]).notices.isEmpty)
        }
    }

    @Test("the command handler loads upcast events, and passes over, undecoded, a snapshot written under other upcasters", arguments: Backend.allCases)
    func commandHandler(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a todo list whose first item was recorded under the type's old name, and a
            // snapshot of its state written without upcasters, then made undecodable
            _ = try await f.log.append(to: "todo-home", events: [evolved("ItemAddedOld", #"{"item":"pen"}"#)])
            let handler = CommandHandler(store: f.log, configuration: CommandHandler.Configuration(snapshotInterval: 2))
            _ = try await handler.handle(.add("ink"), with: TodoDecider(list: "home"))
            let written = try await Snapshots.list(in: f.log)
            #expect(written.map(\.upcasters) == [0])
            try await corruptSnapshot(f.log, state: "not json")
            // When the store reopens with the upcasters and the list is loaded
            try await f.reopen(upcasters: TestUpcasters.all)
            let logs = LogCapture()
            let reopened = CommandHandler(
                store: f.log, configuration: CommandHandler.Configuration(logger: logs.logger, snapshotInterval: 2))
            // Then the renamed record is one of its items, and the snapshot was not decoded
            #expect(try await reopened.state(of: TodoDecider(list: "home")).state == TodoState(open: ["pen", "ink"], done: []))
            #expect(!logs.messages.contains { $0.contains("does not decode") }, "\(logs.messages)")
            // And the next snapshot records the upcasters' fingerprint
            _ = try await reopened.handle(.add("cap"), with: TodoDecider(list: "home"))
            _ = try await reopened.handle(.add("nib"), with: TodoDecider(list: "home"))
            let fingerprint = try Upcasting(TestUpcasters.all).fingerprint(consuming: nil)
            #expect(try await Snapshots.list(in: f.log).map(\.upcasters) == [fingerprint])
            #expect(try await reopened.state(of: TodoDecider(list: "home")).state == TodoState(open: ["pen", "ink", "cap", "nib"], done: []))
        }
    }
}
