import Apps
@testable import EventStoreCore
@testable import EventStoreLMDB
import EventStoreTesting
import Foundation
import Commands
import Projections
import Synchronization
import Testing
import TestSupport

/// A clock a test moves by hand.
final class ManualClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_767_225_600))
    func now() -> Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite("Deletion and retention: holes that never close, ids that stay known, on every backend")
struct DeletionConformanceTests {
    /// Expects `body` to throw an ``EventStoreError`` with `code`.
    func refused(
        _ code: EventStoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async {
        let error = await #expect(throws: EventStoreError.self, sourceLocation: sourceLocation) { try await body() }
        #expect(error?.code == code, sourceLocation: sourceLocation)
    }

    /// Each event as "STREAM@VERSION TYPE".
    func shown(_ events: [RecordedEvent]) -> [String] { events.map { "\($0.stream)@\($0.version) \($0.type)" } }

    /// Every read path's view of the log and of `stream`, to compare before and after.
    func everyPath(_ f: LogFixture, _ stream: String) async throws -> [String: [String]] {
        var paths: [String: [String]] = [:]
        paths["read"] = shown(try await f.log.events())
        paths["forward"] = shown(try await f.log.events(of: stream))
        paths["backward"] = shown(try await f.log.events(of: stream, direction: .backward))
        paths["from version 2"] = shown(try await f.log.events(of: stream, from: 2))
        var paged: [RecordedEvent] = []
        for try await event in f.log.events(from: 1, through: .max, filter: .all, pageSize: 1) { paged.append(event) }
        paths["pages"] = shown(paged)
        let tables = try await f.log.readTables { txn in
            var byStream: [RecordedEvent] = []
            try await txn.forEachEvent(inStream: stream) { byStream.append($0) }
            var byPosition: [RecordedEvent] = []
            try await txn.forEachEvent(from: 1) { byPosition.append($0); return true }
            return (byStream, byPosition)
        }
        paths["tables by stream"] = shown(tables.0)
        paths["tables by position"] = shown(tables.1)
        return paths
    }

    @Test("a soft delete removes a stream's events from every read path, and an append continues at N+1", arguments: Backend.allCases)
    func softDelete(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a stream of 3 events between two others
            _ = try await f.log.append(to: "keep-1", events: [event("A")])
            let id = UUID()
            let written = try await f.log.append(to: "gone-1", events: [event("B", id: id), event("C"), event("B")])
            _ = try await f.log.append(to: "keep-1", events: [event("A")])
            // When it is deleted
            let deletion = try await f.log.deleteStream("gone-1", expectedVersion: .exact(3), hard: false)
            // Then the deletion names the range and the types, recorded at the next position
            #expect(deletion.stream == "gone-1" && deletion.fromVersion == 1 && deletion.toVersion == 3 && deletion.count == 3)
            #expect(deletion.types == ["B", "C"] && !deletion.hard && deletion.reason == "delete" && deletion.position == 6)
            let record = try #require(try await f.log.event(at: 6))
            #expect(record.stream == "$deletions" && record.type == "$StreamDeleted" && StreamDeletion(record) == deletion)
            // And no read path returns its events
            let paths = try await everyPath(f, "gone-1")
            let log = ["keep-1@1 A", "keep-1@2 A", "$deletions@1 $StreamDeleted"]
            #expect(paths["read"] == log && paths["pages"] == log && paths["tables by position"] == log)
            for name in ["forward", "backward", "from version 2", "tables by stream"] { #expect(paths[name] == [], "\(name)") }
            for position in written.positions { #expect(try await f.log.event(at: position) == nil) }
            #expect(try await f.log.event(withID: id) == nil)
            let collector = EventCollector(f.log.subscription(from: .start))
            #expect(shown(try await collector.take(3, within: .seconds(30))) == log, "subscription")
            // And the stream keeps its version, with no events
            let info = try #require(try await f.log.streamInfo("gone-1"))
            #expect(info.version == 3 && info.firstVersion == 4 && info.eventCount == 0 && !info.isTombstoned && info.retention == nil)
            #expect(try await f.log.streamVersion("gone-1") == 3)
            // When it is appended to again
            let again = try await f.log.append(to: "gone-1", events: [event("D")], expectedVersion: .exact(3))
            // Then it continues at version 4, at a new position; the holes stay
            #expect(again.version == 4 && again.positions == [7])
            #expect(shown(try await f.log.events(of: "gone-1")) == ["gone-1@4 D"])
            #expect(shown(try await f.log.events(of: "gone-1", direction: .backward)) == ["gone-1@4 D"])
            #expect(shown(try await collector.take(1, within: .seconds(30))) == ["gone-1@4 D"], "live")
            // And verify accepts the holes the deletion explains, before and after a reopen
            let report = try await f.log.verify()
            #expect(report.isClean, "\(report.problems)")
            try await f.reopen()
            #expect(try await f.log.verify().isClean)
            #expect(try await f.log.headPosition() == 7)
            let statistics = try await f.log.statistics()
            #expect(statistics.eventCount == 4 && statistics.headPosition == 7 && statistics.firstPosition == 1)
        }
    }

    @Test("a deleted event's id stays known: appending it again answers recorded and deleted, and writes nothing", arguments: Backend.allCases)
    func deletedIDs(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given an event with an id, deleted
            let id = UUID()
            let first = try await f.log.append(to: "s-1", events: [event("A", id: id)])
            _ = try await f.log.deleteStream("s-1", expectedVersion: .any, hard: false)
            let head = try await f.log.headPosition()
            // When it is appended again, with the same content or other content
            let same = try await f.log.append(to: "s-1", events: [event("A", id: id)])
            let other = try await f.log.append(to: "s-1", events: [event("Z", #"{"other":1}"#, id: id)])
            // Then both answer recorded and deleted at the original position, and nothing is written
            for result in [same, other] {
                #expect(result.alreadyRecorded && result.deleted && result.positions == first.positions)
            }
            #expect(try await f.log.headPosition() == head)
            #expect(try await f.log.events(of: "s-1").isEmpty)
            // And after a reopen too
            try await f.reopen()
            let reopened = try await f.log.append(to: "s-1", events: [event("A", id: id)])
            let headAfter = try await f.log.headPosition()
            #expect(reopened.alreadyRecorded && reopened.deleted && headAfter == head)
        }
    }

    @Test("a hard delete tombstones the stream: every later append and delete is refused, and nothing is written", arguments: Backend.allCases)
    func hardDelete(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a stream deleted hard
            _ = try await f.log.append(to: "t-1", events: [event("A"), event("A")])
            let deletion = try await f.log.deleteStream("t-1", expectedVersion: .any, hard: true)
            #expect(deletion.hard && deletion.count == 2)
            let head = try await f.log.headPosition()
            // When anyone appends to it, alone or with another stream, or deletes it again
            await refused(.streamTombstoned) {
                _ = try await f.log.append(to: "t-1", events: [event("B")])
            }
            await refused(.streamTombstoned) {
                _ = try await f.log.append([
                    StreamAppend(stream: "other-1", events: [event("B")]), StreamAppend(stream: "t-1", events: [event("B")]),
                ])
            }
            await refused(.streamTombstoned) {
                _ = try await f.log.deleteStream("t-1", expectedVersion: .any, hard: false)
            }
            // Then nothing was written, and the stream says it is tombstoned
            #expect(try await f.log.headPosition() == head)
            #expect(try await f.log.streamInfo("t-1")?.isTombstoned == true)
            do {
                _ = try await f.log.append(to: "t-1", events: [event("B")])
            } catch let error as EventStoreError {
                #expect(error.message == "The stream 't-1' was deleted for good (tombstoned) and takes no more events; use another stream name.")
            }
            #expect(try await f.log.verify().isClean)
        }
    }

    @Test("deleting checks the expected version, refuses a stream never written and the store's own, and changes nothing then", arguments: Backend.allCases)
    func refusals(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "s-1", events: [event("A")])
            await refused(.versionConflict) {
                _ = try await f.log.deleteStream("s-1", expectedVersion: .exact(2), hard: false)
            }
            await refused(.notFound) {
                _ = try await f.log.deleteStream("never-1", expectedVersion: .any, hard: false)
            }
            await refused(.invalidInput) {
                _ = try await f.log.deleteStream("$deletions", expectedVersion: .any, hard: false)
            }
            await refused(.invalidInput) {
                _ = try await f.log.append(to: "$deletions", events: [event(StreamDeletion.eventType)])
            }
            await refused(.invalidInput) {
                try await f.log.setRetention(RetentionPolicy(maxCount: 0), for: "s-1")
            }
            await refused(.notFound) {
                try await f.log.setRetention(RetentionPolicy(maxCount: 1), for: "never-1")
            }
            #expect(try await f.log.headPosition() == 1)
            #expect(shown(try await f.log.events(of: "s-1")) == ["s-1@1 A"])
            // And a stream whose events are all deleted has nothing left to delete softly; a hard
            // delete still tombstones it, recording an empty range; a tombstoned stream takes no policy
            _ = try await f.log.deleteStream("s-1", expectedVersion: .any, hard: false)
            let head = try await f.log.headPosition()
            await refused(.notFound) { _ = try await f.log.deleteStream("s-1", expectedVersion: .any, hard: false) }
            #expect(try await f.log.headPosition() == head)
            let hard = try await f.log.deleteStream("s-1", expectedVersion: .exact(1), hard: true)
            #expect(hard.count == 0 && hard.hard && hard.fromVersion == 2 && hard.toVersion == 1)
            await refused(.streamTombstoned) { try await f.log.setRetention(RetentionPolicy(maxCount: 1), for: "s-1") }
            await refused(.invalidInput) { try await f.log.setRetention(RetentionPolicy(maxCount: UInt64.max), for: "s-1") }
            #expect(try await f.log.verify().isClean)
        }
    }

    @Test("a retention policy removes what it no longer keeps at the stream's next append, and purge applies every policy", arguments: Backend.allCases)
    func retention(_ backend: Backend) async throws {
        let clock = ManualClock()
        try await withLog(backend, now: clock.now) { f in
            // Given a stream of 5 events with a policy of 3 at most, and one truncated before version 3
            _ = try await f.log.append(to: "count-1", events: (1...5).map { _ in event("A") })
            _ = try await f.log.append(to: "cut-1", events: (1...4).map { _ in event("B") })
            try await f.log.setRetention(RetentionPolicy(maxCount: 3), for: "count-1")
            try await f.log.setRetention(RetentionPolicy(truncateBefore: 3), for: "cut-1")
            // Then setting a policy removes nothing yet
            #expect(try await f.log.events(of: "count-1").count == 5)
            #expect(try await f.log.streamInfo("count-1")?.retention == RetentionPolicy(maxCount: 3))
            // When count-1 is appended to, then in that append's transaction it keeps its newest 3
            _ = try await f.log.append(to: "count-1", events: [event("A")])
            #expect(shown(try await f.log.events(of: "count-1")) == ["count-1@4 A", "count-1@5 A", "count-1@6 A"])
            #expect(try await f.log.streamInfo("count-1")?.eventCount == 3)
            // And cut-1 keeps everything until a purge, which says what it removed
            #expect(try await f.log.events(of: "cut-1").count == 4)
            let purged = try await f.log.purge()
            #expect(purged.map { "\($0.stream) \($0.fromVersion)...\($0.toVersion) \($0.reason)" } == ["cut-1 1...2 retention"])
            #expect(shown(try await f.log.events(of: "cut-1")) == ["cut-1@3 B", "cut-1@4 B"])
            #expect(try await f.log.purge().isEmpty, "a second purge has nothing to remove")
            // When events age past a policy's maximum age (on the store's clock)
            _ = try await f.log.append(to: "age-1", events: [event("C"), event("C")])
            try await f.log.setRetention(RetentionPolicy(maxAge: .seconds(60)), for: "age-1")
            clock.advance(by: 61)
            _ = try await f.log.append(to: "age-1", events: [event("C")])
            // Then the next append removed them, and kept itself
            #expect(shown(try await f.log.events(of: "age-1")) == ["age-1@3 C"])
            // And clearing a policy keeps everything from then on
            try await f.log.setRetention(RetentionPolicy(), for: "count-1")
            _ = try await f.log.append(to: "count-1", events: [event("A")])
            #expect(try await f.log.events(of: "count-1").count == 4)
            // And positions only ever increase, across deletions, purges and a reopen
            let before = try await f.log.events().map(\.position)
            #expect(before == before.sorted() && Set(before).count == before.count)
            try await f.reopen()
            let next = try await f.log.append(to: "count-1", events: [event("A")])
            #expect(next.positions[0] > (before.last ?? 0))
            let report = try await f.log.verify()
            #expect(report.isClean, "\(report.problems)")
        }
    }

    @Test("a page of the log that ends in a hole is read through its end, so paging goes on past it", arguments: Backend.allCases)
    func pagesEndingInHoles(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a log whose positions 2...3 are holes
            _ = try await f.log.append(to: "a-1", events: [event("A")])
            _ = try await f.log.append(to: "b-1", events: [event("B"), event("B")])
            _ = try await f.log.append(to: "a-1", events: [event("A")])
            _ = try await f.log.deleteStream("b-1", expectedVersion: .any, hard: false)
            // When a range that ends in the holes is read a page at a time, then it ends
            var seen: [RecordedEvent] = []
            for try await event in f.log.events(from: 1, through: 3, filter: .all, pageSize: 1) { seen.append(event) }
            #expect(shown(seen) == ["a-1@1 A"])
            var rest: [RecordedEvent] = []
            for try await event in f.log.events(from: 2, through: .max, filter: .all, pageSize: 1) { rest.append(event) }
            #expect(shown(rest) == ["a-1@2 A", "$deletions@1 $StreamDeleted"])
        }
    }
}

/// How many `X` events each stream has; with `handlesDeletions`, it also reads `$StreamDeleted`
/// events and drops the deleted stream's row.
struct CountsByStream: Projection {
    var name = "counts-by-stream"
    let version = 1
    let tables = ["counts"]
    var handlesDeletions = false
    var eventTypes: Set<String>? { handlesDeletions ? ["X", StreamDeletion.eventType] : ["X"] }
    let errorPolicy = ProjectionErrorPolicy.stop
    let queryParameters: [QueryParameter] = []

    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        if let deletion = StreamDeletion(event) {
            // A delete of the whole stream: its row goes (a trim rebuilds the projection instead).
            if deletion.removesTheStream { try state.delete("counts", RowKey(deletion.stream)) }
            return
        }
        try state.put("counts", RowKey(event.stream), (try state.get("counts", RowKey(event.stream), as: Int.self) ?? 0) + 1)
    }

    func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        .object(try await state.rows("counts", as: Int.self).map { ($0.key.decode(String.self) ?? "?", .int(Int64($0.value))) })
    }
}

@Suite("Deletion and projections: rebuild == live after any deletion, on every backend")
struct DeletionProjectionTests {
    @Test("a command that loaded before a deletion committed writes its events but not the snapshot it folded", arguments: Backend.allCases)
    func noSnapshotAcrossADeletion(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await withInterloperTurn {
                // Given snapshots due with every event, and a stream that another process deletes
                // while the command decides (which changes no version the command read)
                _ = try await f.log.append(to: "other-1", events: [event("X")])
                let handler = CommandHandler(store: f.log, configuration: CommandHandler.Configuration(snapshotInterval: 1))
                let deleter = Interloper(store: f.log, stream: "todo-home", atDecisions: [1]) { store in
                    _ = try await store.deleteStream("other-1", expectedVersion: .any, hard: false)
                }
                // When the command runs, then its event is recorded, and no snapshot is written
                let outcome = try await handler.handle(.add("pen"), with: TodoDecider(list: "home", interloper: deleter))
                #expect(outcome.recorded.map(\.version) == [1])
                #expect(try await Snapshots.list(in: f.log).isEmpty)
                // And the next command, which loads after the deletion, writes one
                _ = try await handler.handle(.add("ink"), with: TodoDecider(list: "home"))
                #expect(try await Snapshots.list(in: f.log).count == 1)
            }
        }
    }

    @Test("a command on a soft-deleted stream decides from nothing and appends after the deleted versions", arguments: Backend.allCases)
    func commandsAfterDelete(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a todo list with two items, deleted
            let handler = CommandHandler(store: f.log)
            let decider = TodoDecider(list: "home")
            _ = try await handler.handle(.add("pen"), with: decider)
            _ = try await handler.handle(.add("ink"), with: decider)
            _ = try await f.log.deleteStream("todo-home", expectedVersion: .exact(2), hard: false)
            // When a command runs on it, then it sees an empty list and appends version 3
            #expect(try await handler.state(of: decider).state == TodoState())
            _ = try await handler.handle(.add("pen"), with: decider)
            #expect(try await f.log.events(of: "todo-home").map(\.version) == [3])
        }
    }

    @Test("a projection that read a deleted stream is rebuilt beside its state; one that handles deletions applies them", arguments: Backend.allCases)
    func rebuildEqualsLive(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given two projections of X events, one handling deletions, caught up with two streams
            _ = try await f.log.append(to: "a-1", events: [event("X"), event("X")])
            _ = try await f.log.append(to: "b-1", events: [event("X"), event("Y")])
            let plain = CountsByStream()
            let handling = CountsByStream(name: "handling", handlesDeletions: true)
            let logs = LogCapture()
            let runner = try await ProjectionRunner(store: f.log, projections: [plain, handling], logger: logs.logger)
            try await runner.catchUp()
            #expect(try await runner.query(plain.name) == ["a-1": 2, "b-1": 1])
            // When b-1 is deleted and the projections catch up
            _ = try await f.log.deleteStream("b-1", expectedVersion: .any, hard: false)
            try await runner.catchUp()
            // Then both states hold a-1 only: the plain one was rebuilt, the other applied the deletion
            #expect(try await runner.query(plain.name) == ["a-1": 2])
            #expect(try await runner.query(handling.name) == ["a-1": 2])
            let rebuilt = logs.messages.filter { $0.contains("deleted since; rebuilding") }
            #expect(rebuilt.count == 1 && rebuilt.allSatisfy { $0.hasPrefix("Projection 'counts-by-stream' read events that were deleted since; rebuilding it.") })
            // And rebuild == live for both
            let live = await (try runner.storedHash(of: plain.name), try runner.storedHash(of: handling.name))
            let reports = try await runner.rebuild()
            #expect(reports.map(\.hash) == [live.0, live.1])
            // And a deletion of another type's stream rebuilds nothing
            _ = try await f.log.append(to: "c-1", events: [event("Z")])
            _ = try await f.log.deleteStream("c-1", expectedVersion: .any, hard: false)
            try await runner.catchUp()
            #expect(logs.messages.filter { $0.contains("deleted since; rebuilding") }.count == 1)
            // And a runner opened later finds nothing to rebuild
            let again = try await ProjectionRunner(store: f.log, projections: [plain, handling])
            #expect(again.notices.isEmpty, "\(again.notices)")
        }
    }
}

@Suite("Deletion and the apps: their projections equal a rebuild after deletes and trims, on every backend")
struct DeletionAppsTests {
    @Test("deleting the apps' streams: app state, alerts and color drop their rows themselves, the others are rebuilt; a trim rebuilds", arguments: Backend.allCases)
    func appsAfterDeletions(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            // Given seeded traffic of every app, caught up
            try await domainTraffic(f.backend, clock: f.clock, seed: 11, steps: 150)
            _ = try await f.backend.color(.press("A"), calculator: "ann")
            let logs = LogCapture()
            let runner = try await ProjectionRunner(store: f.store, projections: AppCatalog.apps, logger: logs.logger)
            try await runner.catchUp()
            // When ann's streams of every app are deleted, and the projections catch up
            var deleted: [String] = []
            for stream in ["fitness-ann", "alerts-ann", "color-ann", "chat-main", "campground-ann"] where try await f.store.streamInfo(stream) != nil {
                _ = try await f.store.deleteStream(stream, expectedVersion: .any, hard: false)
                deleted.append(stream)
            }
            #expect(deleted.contains("fitness-ann") && deleted.contains("color-ann"), "\(deleted)")
            try await runner.catchUp()
            // Then the projections keyed by those streams handled it, and rebuild == live for all
            let rebuilt = Set(logs.messages.filter { $0.contains("deleted since; rebuilding") }.compactMap { $0.split(separator: "'").dropFirst().first.map(String.init) })
            #expect(rebuilt.isDisjoint(with: ["app-state", "alerts", "color"]), "\(rebuilt)")
            #expect(try await runner.query("app-state", parameters: ["user": "ann"])["state"] == "notStarted")
            var live = try await AppCatalog.apps.asyncMap { try await runner.storedHash(of: $0.name) }
            #expect(try await runner.rebuild().map(\.hash) == live)
            // When a retention policy trims bob's workout, then even app-state is rebuilt, to a fold of what is left
            _ = try #require(try await f.store.streamInfo("fitness-bob"), "the seeded traffic gave bob a workout")
            try await f.store.setRetention(RetentionPolicy(maxCount: 1), for: "fitness-bob")
            _ = try await f.backend.fitness(.setGoal(5), user: "bob")
            try await runner.catchUp()
            #expect(logs.messages.contains { $0.hasPrefix("Projection 'app-state' read events that were deleted since") })
            live = try await AppCatalog.apps.asyncMap { try await runner.storedHash(of: $0.name) }
            #expect(try await runner.rebuild().map(\.hash) == live)
        }
    }

    @Test("a deleted or trimmed stream's command snapshots go with it; the others stay", arguments: Backend.allCases)
    func snapshotsGo(_ backend: Backend) async throws {
        try await withDomain(backend, snapshotInterval: 2) { f in
            // Given snapshots of ann's and bob's workouts
            for user in ["ann", "bob"] {
                _ = try await f.backend.fitness(.setGoal(50), user: user)
                _ = try await f.backend.fitness(.start, user: user)
                _ = try await f.backend.fitness(.walk(steps: 3, distance: 1), user: user)
            }
            func snapshotStreams() async throws -> Set<String> {
                Set(try await Snapshots.list(in: f.store).flatMap { $0.versions.map(\.stream) })
            }
            #expect(try await snapshotStreams().isSuperset(of: ["fitness-ann", "fitness-bob"]))
            // When ann's workout is deleted, then no snapshot names it, and bob's stay
            _ = try await f.store.deleteStream("fitness-ann", expectedVersion: .any, hard: false)
            let left = try await snapshotStreams()
            #expect(!left.contains("fitness-ann") && left.contains("fitness-bob"), "\(left)")
            // And a command on ann's workout starts from nothing, after the deleted versions
            #expect(try await f.backend.fitnessState(user: "ann").workout == Workout())
            // When bob's workout gets a policy and his next command trims it, then the snapshot
            // that command wrote goes with the events it trimmed
            try await f.store.setRetention(RetentionPolicy(maxCount: 1), for: "fitness-bob")
            _ = try await f.backend.fitness(.walk(steps: 1, distance: 1), user: "bob")
            #expect(try await f.store.streamInfo("fitness-bob")?.eventCount == 1)
            #expect(!(try await snapshotStreams()).contains("fitness-bob"))
        }
    }
}
