import Commands
import EventStore
import EventStoreTesting
import Foundation
import Testing
import TestSupport

/// The generic handler: load the decider's streams, decide, append with the versions read, and
/// retry when another writer got in between.
@Suite("The command handler, on every backend")
struct CommandConformanceTests {
    let pen = TodoEvent.added(ItemAdded(item: "pen"))

    func handler(_ log: any EventLog, attempts: Int = 5, clock: any Clock<Duration> = ContinuousClock()) -> CommandHandler {
        CommandHandler(store: log, configuration: CommandHandler.Configuration(maximumAttempts: attempts, backoff: .milliseconds(10), clock: clock))
    }

    @Test("a command's events are appended and returned as recorded, with no read-back", arguments: Backend.allCases)
    func recordsEvents(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given an empty list; when "pen" is added
            let outcome = try await handler(f.log).handle(.add("pen"), with: TodoDecider(list: "home"))
            // Then one event is recorded at position 1, version 1, and the state has it
            #expect(outcome.events == [pen])
            #expect(outcome.recorded.map(\.position) == [1])
            #expect(outcome.recorded.map(\.version) == [1])
            #expect(outcome.recorded.map(\.stream) == ["todo-home"])
            #expect(outcome.recorded.map(\.id) == [SequentialIDs.id(1)])
            #expect(outcome.recorded == (try await f.log.events()))
            #expect(outcome.state == TodoState(open: ["pen"], done: []))
            #expect(outcome.passedOver.isEmpty)
            #expect(outcome.attempts == 1)
        }
    }

    @Test("the state is folded from the stream, and state(of:) reads it without deciding", arguments: Backend.allCases)
    func foldsTheStream(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given three commands on the home list
            let handler = handler(f.log)
            let decider = TodoDecider(list: "home")
            _ = try await handler.handle(.add("pen"), with: decider)
            _ = try await handler.handle(.add("ink"), with: decider)
            let outcome = try await handler.handle(.complete("pen"), with: decider)
            // Then the last outcome's state is the fold of the stream, and state(of:) reads the same
            #expect(outcome.state == TodoState(open: ["ink"], done: ["pen"]))
            #expect(try await handler.state(of: decider).state == outcome.state)
            #expect(try await handler.state(of: TodoDecider(list: "work")).state == TodoState())
            #expect(try await f.log.headPosition() == 3)
        }
    }

    @Test("a refusal is thrown unchanged and nothing is written", arguments: Backend.allCases)
    func refusal(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let handler = handler(f.log)
            _ = try await handler.handle(.add("pen"), with: TodoDecider(list: "home"))
            await #expect(throws: TodoRefused(reason: "pen is already on the list")) {
                try await handler.handle(.add("pen"), with: TodoDecider(list: "home"))
            }
            await #expect(throws: TodoRefused(reason: "ink is not on the list")) {
                try await handler.handle(.complete("ink"), with: TodoDecider(list: "home"))
            }
            #expect(try await f.log.headPosition() == 1)
        }
    }

    @Test("a command with nothing to do writes nothing and returns the loaded state", arguments: Backend.allCases)
    func nothingToDo(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let handler = handler(f.log)
            _ = try await handler.handle(.add("pen"), with: TodoDecider(list: "home"))
            let outcome = try await handler.handle(.nothing, with: TodoDecider(list: "home"))
            #expect(outcome.events.isEmpty)
            #expect(outcome.recorded.isEmpty)
            #expect(outcome.state == TodoState(open: ["pen"], done: []))
            #expect(try await f.log.headPosition() == 1)
        }
    }

    @Test("an event that cannot be encoded is refused as unencodable and nothing is written", arguments: Backend.allCases)
    func unencodable(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let error = await #expect(throws: CommandError.self) {
                try await handler(f.log).handle(.measure(.infinity), with: TodoDecider(list: "home"))
            }
            #expect(error?.code == .unencodable)
            #expect(error?.message.hasSuffix("nothing was written.") == true)
            let head = try await f.log.headPosition()
            #expect(head == 0)
        }
    }

    @Test("events for two streams commit in one append, each loaded stream guarded by the version read", arguments: Backend.allCases)
    func twoStreams(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let handler = handler(f.log)
            let decider = TodoDecider(list: "home", archives: true)
            _ = try await handler.handle(.add("pen"), with: decider)
            let outcome = try await handler.handle(.complete("pen"), with: decider)
            #expect(outcome.recorded.map(\.stream) == ["todo-home", "archive-home"])
            #expect(outcome.recorded.map(\.position) == [2, 3])
            #expect(outcome.recorded.map(\.version) == [2, 1])
            #expect(Set(outcome.recorded.map(\.recordedAtMicroseconds)).count == 1)
            #expect(try await f.log.streamVersion("archive-home") == 1)
            #expect(outcome.state == TodoState(open: [], done: ["pen"]))
        }
    }

    @Test("events the decider cannot read are passed over, reported, and the command still decides", arguments: Backend.allCases)
    func passesOver(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a hand-appended event of a known type with bad data, and one of an unknown type
            _ = try await f.log.append(to: "todo-home", events: [
                NewEvent(type: "ItemAdded", data: Data(#"{"name":"pen"}"#.utf8)),
                NewEvent(type: "Mystery", data: Data("{}".utf8)),
            ])
            // When an item is added
            let outcome = try await handler(f.log).handle(.add("ink"), with: TodoDecider(list: "home"))
            // Then both are reported and the event is appended after them (guarded by version 2)
            #expect(outcome.passedOver.map(\.position) == [1, 2])
            #expect(outcome.passedOver.map(\.type) == ["ItemAdded", "Mystery"])
            #expect(outcome.passedOver[0].reason.hasPrefix("its data is not a ItemAdded"))
            #expect(outcome.passedOver[1].reason == "Mystery is not a todo event")
            #expect(outcome.recorded.map(\.version) == [3])
            #expect(outcome.state == TodoState(open: ["ink"], done: []))
        }
    }

    @Test("another writer in between: with one attempt the command fails as a conflict and writes nothing", arguments: Backend.allCases)
    func conflictWithoutRetry(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await withInterloperTurn {
                // Given another writer that appends to the list while the command decides
                let interloper = Interloper(store: f.log, stream: "todo-home", atDecisions: [1])
                // When the command runs with one attempt
                let error = await #expect(throws: CommandError.self) {
                    try await handler(f.log, attempts: 1).handle(.add("pen"), with: TodoDecider(list: "home", interloper: interloper))
                }
                // Then it fails as a conflict naming the stream
                #expect(error?.code == .conflict)
                #expect(error?.attempts == 1)
                #expect(error?.underlying?.code == .versionConflict)
                #expect(error?.underlying?.conflicts == [VersionConflict(stream: "todo-home", expected: .noStream, actual: 1)])
                #expect(error?.message == "Other writers kept changing 'todo-home' during 1 attempts; try again.")
                // And only the other writer's event is in the log
                let all = try await f.log.events()
                #expect(all.map(\.type) == ["ItemAdded"])
                #expect(all.map(\.data) == [Data(#"{"item":"other-1"}"#.utf8)])
            }
        }
    }

    @Test("another writer in between: the command waits the backoff on the clock, decides again on the new state, and records", arguments: Backend.allCases)
    func conflictRetried(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await withInterloperTurn {
                // Given another writer at the first two decisions, and retries on a test clock
                let clock = TestClock()
                let interloper = Interloper(store: f.log, stream: "todo-home", atDecisions: [1, 2])
                let handler = handler(f.log, attempts: 3, clock: clock)
                let command = Task(executorPreference: DeciderExecutor.shared) {
                    try await handler.handle(.add("pen"), with: TodoDecider(list: "home", interloper: interloper))
                }
                // Then the first retry waits 10 ms, the second 20 ms: nothing happens until the clock moves
                try await clock.waitForSleepers(1, timeout: .seconds(60))
                #expect(interloper.decisionCount == 1)
                clock.advance(by: .milliseconds(9))
                #expect(clock.sleeperCount == 1)
                clock.advance(by: .milliseconds(1))
                try await clock.waitForSleepers(1, timeout: .seconds(60))
                #expect(interloper.decisionCount == 2)
                clock.advance(by: .milliseconds(20))
                // And the third attempt records, on the state the other writer left
                let outcome = try await withTimeout(.seconds(30), "the third attempt's outcome") { try await command.value }
                #expect(outcome.attempts == 3)
                #expect(interloper.decisionCount == 3)
                #expect(outcome.state == TodoState(open: ["other-1", "other-2", "pen"], done: []))
                #expect(outcome.recorded.map(\.version) == [3])
                #expect(try await f.log.events(of: "todo-home").map(\.type) == ["ItemAdded", "ItemAdded", "ItemAdded"])
            }
        }
    }

    @Test("a retried request whose events carry ids already recorded writes nothing and returns the events as first recorded", arguments: Backend.allCases)
    func idempotentRetry(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a note sent with a request id, and another command after it
            let handler = handler(f.log)
            let request = UUID(uuidString: "0000000A-0000-4000-8000-00000000000A")!
            let first = try await handler.handle(.note("hello", id: request), with: TodoDecider(list: "home"))
            _ = try await handler.handle(.add("pen"), with: TodoDecider(list: "home"))
            // When the same request is sent again (its answer was lost, say)
            let retried = try await handler.handle(.note("hello", id: request), with: TodoDecider(list: "home"))
            // Then nothing new is written, and the outcome records the event where it first went
            #expect(first.recorded.map(\.position) == [1])
            #expect(first.recorded.map(\.id) == [request])
            #expect(retried.recorded == first.recorded)
            #expect(retried.events == [.noted(NoteSent(text: "hello"), id: request)])
            #expect(retried.attempts == 1)
            #expect(try await f.log.headPosition() == 2)
            #expect(try await f.log.events(of: "outbox-home") == first.recorded)
        }
    }
}

/// Snapshots of a decider's state: written with the append that makes one due, read instead of
/// the events before it, and never the reason for another outcome.
@Suite("Snapshots, on every backend")
struct SnapshotConformanceTests {
    func handler(_ log: any EventLog, interval: Int) -> CommandHandler {
        CommandHandler(store: log, configuration: CommandHandler.Configuration(snapshotInterval: interval))
    }

    /// Runs the same commands through the handler generic over `StreamDecider` (no snapshots).
    func withoutSnapshots<D: StreamDecider>(_ handler: CommandHandler, _ command: D.Command, _ decider: D) async throws -> CommandOutcome<D> {
        try await handler.handle(command, with: decider)
    }

    @Test("a snapshot is written with the append that reaches the interval, at exactly the versions committed", arguments: Backend.allCases)
    func writtenWhenDue(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given snapshots every 3 events, after two commands there is none
            let handler = handler(f.log, interval: 3)
            let home = TodoDecider(list: "home")
            for item in ["a", "b"] { _ = try await handler.handle(.add(item), with: home) }
            #expect(try await Snapshots.list(in: f.log).isEmpty)
            // When the third is appended, then its append wrote one at version 3
            _ = try await handler.handle(.add("c"), with: home)
            var listed = try await Snapshots.list(in: f.log)
            #expect(listed.map(\.decider) == ["todo"])
            #expect(listed.map(\.versions) == [[Snapshots.StreamVersion(stream: "todo-home", version: 3)]])
            #expect(listed.first.map { String(decoding: $0.state, as: UTF8.self) } == #"{"done":[],"open":["a","b","c"]}"#)
            // And two more commands are not due; the third is
            _ = try await handler.handle(.add("d"), with: home)
            _ = try await handler.handle(.complete("a"), with: home)
            #expect(try await Snapshots.list(in: f.log).first?.versions.first?.version == 3)
            _ = try await handler.handle(.add("e"), with: home)
            listed = try await Snapshots.list(in: f.log)
            #expect(listed.first?.versions.first?.version == 6)
            #expect(listed.first.map { String(decoding: $0.state, as: UTF8.self) } == #"{"done":["a"],"open":["b","c","d","e"]}"#)
            // And refusals and commands with nothing to do write nothing
            await #expect(throws: TodoRefused.self) { try await handler.handle(.add("e"), with: home) }
            #expect(try await Snapshots.list(in: f.log).first?.versions.first?.version == 6)
        }
    }

    @Test("with snapshots every command decides the same events and state as without, for random commands", arguments: Backend.allCases, [1, 2, 5])
    func sameOutcomes(_ backend: Backend, interval: Int) async throws {
        try await withLog(backend) { withSnapshots in
            try await withLog(backend) { plain in
                // Given two stores, one with snapshots every `interval` events, one without
                var random = SeededGenerator(seed: UInt64(interval) * 7_919)
                let snapshotting = handler(withSnapshots.log, interval: interval)
                let reference = handler(plain.log, interval: 1_000_000)
                let items = ["a", "b", "c", "d"]
                // When the same random commands run on both
                for _ in 0..<150 {
                    let list = ["home", "work"].randomElement(using: &random) ?? "home"
                    let item = items.randomElement(using: &random) ?? "a"
                    let command: TodoCommand = [.add(item), .complete(item), .nothing].randomElement(using: &random) ?? .nothing
                    let decider = TodoDecider(list: list, archives: list == "work")
                    let snapshotted = await outcome { try await snapshotting.handle(command, with: decider) }
                    let folded = await outcome { try await withoutSnapshots(reference, command, decider) }
                    // Then each decides the same
                    switch (snapshotted, folded) {
                    case let (.success(a), .success(b)):
                        #expect(a.events == b.events && a.state == b.state, "\(command) on \(list)")
                    case let (.failure(a), .failure(b)):
                        #expect("\(a)" == "\(b)")
                    default:
                        Issue.record("\(command) on \(list): \(snapshotted) with snapshots, \(folded) without")
                    }
                }
                // And snapshots were written, and the states read through them are the folds
                let snapshots = try await Snapshots.list(in: withSnapshots.log)
                #expect(!snapshots.isEmpty)
                for list in ["home", "work"] {
                    let decider = TodoDecider(list: list, archives: list == "work")
                    let fromSnapshot = try await snapshotting.state(of: decider).state
                    let folded = try await reference.state(of: decider).state
                    #expect(fromSnapshot == folded)
                }
                // And both logs hold the same events (at times of their own: on LMDB the store with
                // snapshots opened their table, a write that read the stepping clock)
                func untimed(_ events: [RecordedEvent]) -> [String] {
                    events.map { "\($0.position) \($0.stream) \($0.version) \($0.id) \($0.type) \(Array($0.data)) \(Array($0.metadata))" }
                }
                #expect(untimed(try await withSnapshots.log.events()) == untimed(try await plain.log.events()))
            }
        }
    }

    @Test("a snapshot of another decider version is ignored, then replaced when the next one is due", arguments: Backend.allCases)
    func otherVersionIgnored(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let handler = handler(f.log, interval: 2)
            for item in ["a", "b"] { _ = try await handler.handle(.add(item), with: TodoDecider(list: "home")) }
            // Given the stored snapshot of version 1 made to lie about the state
            try await corruptSnapshot(f.log, state: #"{"done":[],"open":["lie"]}"#)
            var next = TodoDecider(list: "home")
            next.snapshotVersion = 2
            // When the decider of version 2 loads, then it folds from the first event
            #expect(try await handler.state(of: next).state == TodoState(open: ["a", "b"], done: []))
            // And version 1 reads the lie (the snapshot is its own), which shows it is read at all
            #expect(try await handler.state(of: TodoDecider(list: "home")).state == TodoState(open: ["lie"], done: []))
            // And the next due snapshot is of version 2
            for item in ["c", "d"] { _ = try await handler.handle(.add(item), with: next) }
            #expect(try await Snapshots.list(in: f.log).map(\.deciderVersion) == [2])
            #expect(try await handler.state(of: next).state == TodoState(open: ["a", "b", "c", "d"], done: []))
        }
    }

    @Test("a snapshot of another decider version is passed over before its state is decoded", arguments: Backend.allCases)
    func otherVersionNotDecoded(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a snapshot of version 1 whose state is not even JSON
            for item in ["a", "b"] { _ = try await handler(f.log, interval: 2).handle(.add(item), with: TodoDecider(list: "home")) }
            try await corruptSnapshot(f.log, state: "not json")
            let logs = LogCapture()
            let watched = CommandHandler(store: f.log, configuration: CommandHandler.Configuration(logger: logs.logger, snapshotInterval: 2))
            var next = TodoDecider(list: "home")
            next.snapshotVersion = 2
            // When version 2 loads, then it folds from the first event without decoding the snapshot
            #expect(try await watched.state(of: next).state == TodoState(open: ["a", "b"], done: []))
            #expect(!logs.messages.contains { $0.contains("does not decode") }, "\(logs.messages)")
            // And version 1 does decode it, and says so (which shows the check can fail)
            #expect(try await watched.state(of: TodoDecider(list: "home")).state == TodoState(open: ["a", "b"], done: []))
            #expect(logs.messages.contains { $0.contains("does not decode") }, "\(logs.messages)")
        }
    }

    @Test("a snapshot that does not decode is passed over and replaced; deleting snapshots changes nothing", arguments: Backend.allCases)
    func corruptIgnored(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a snapshot whose state is not JSON
            let handler = handler(f.log, interval: 2)
            let home = TodoDecider(list: "home")
            for item in ["a", "b"] { _ = try await handler.handle(.add(item), with: home) }
            try await corruptSnapshot(f.log, state: "not json")
            // When a command runs, then it folds from the first event, and (three events since a
            // usable snapshot) writes a new one
            let outcome = try await handler.handle(.add("c"), with: home)
            #expect(outcome.state == TodoState(open: ["a", "b", "c"], done: []))
            let listed = try await Snapshots.list(in: f.log)
            #expect(listed.first?.versions.first?.version == 3)
            #expect(listed.first.map { String(decoding: $0.state, as: UTF8.self) } == #"{"done":[],"open":["a","b","c"]}"#)
            // And dropping the snapshots changes no state
            _ = try await handler.handle(.add("d"), with: home)
            #expect(try await Snapshots.drop(in: f.log) == 1)
            #expect(try await Snapshots.list(in: f.log).isEmpty)
            #expect(try await handler.state(of: home).state == TodoState(open: ["a", "b", "c", "d"], done: []))
        }
    }

    @Test("events before the snapshot are not read again: an event passed over before it is not reported again", arguments: Backend.allCases)
    func readsOnlyTheTail(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let handler = handler(f.log, interval: 2)
            let home = TodoDecider(list: "home")
            _ = try await f.log.append(to: "todo-home", events: [NewEvent(type: "Mystery", data: Data("{}".utf8))])
            let first = try await handler.handle(.add("a"), with: home)
            #expect(first.passedOver.map(\.position) == [1])
            // The snapshot written with that append covers the mystery event.
            let later = try await handler.handle(.add("b"), with: home)
            #expect(later.passedOver.isEmpty)
            #expect(later.state == TodoState(open: ["a", "b"], done: []))
        }
    }

    @Test("a decider over two streams keeps both versions; drop by stream removes the snapshots that include it", arguments: Backend.allCases)
    func twoStreams(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let handler = handler(f.log, interval: 2)
            let work = TodoDecider(list: "work", archives: true)
            _ = try await handler.handle(.add("a"), with: work)
            _ = try await handler.handle(.complete("a"), with: work)
            #expect(try await Snapshots.list(in: f.log).first?.versions == [
                Snapshots.StreamVersion(stream: "todo-work", version: 2), Snapshots.StreamVersion(stream: "archive-work", version: 1),
            ])
            _ = try await handler.handle(.add("x"), with: TodoDecider(list: "home"))
            _ = try await handler.handle(.add("y"), with: TodoDecider(list: "home"))
            #expect(try await Snapshots.list(in: f.log).count == 2)
            #expect(try await Snapshots.drop(in: f.log, stream: "archive-work") == 1)
            #expect(try await Snapshots.list(in: f.log).map(\.versions.first?.stream) == ["todo-home"])
        }
    }

    @Test("a snapshot is written in the append's transaction: a version conflict writes neither, and a retry writes it at the new versions", arguments: Backend.allCases)
    func conflictWritesNoSnapshot(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await withInterloperTurn {
                // Given snapshots due with every event, and another writer at the first decision
                let configuration = { (attempts: Int) in
                    CommandHandler.Configuration(maximumAttempts: attempts, backoff: .milliseconds(1), snapshotInterval: 1)
                }
                let once = CommandHandler(store: f.log, configuration: configuration(1))
                // When the command meets the conflict with no attempt left
                let error = await #expect(throws: CommandError.self) {
                    try await once.handle(.add("pen"), with: TodoDecider(list: "home", interloper: Interloper(store: f.log, stream: "todo-home", atDecisions: [1])))
                }
                // Then neither its event nor its snapshot is written
                #expect(error?.code == .conflict)
                #expect(try await Snapshots.list(in: f.log).isEmpty)
                #expect(try await f.log.events(of: "todo-home").map(\.version) == [1])
                // When it meets another writer again, with a second attempt
                let twice = CommandHandler(store: f.log, configuration: configuration(2))
                let outcome = try await twice.handle(
                    .add("pen"), with: TodoDecider(list: "home", interloper: Interloper(store: f.log, stream: "todo-home", atDecisions: [1])))
                // Then the one snapshot describes the versions the retry committed
                #expect(outcome.attempts == 2)
                #expect(outcome.recorded.map(\.version) == [3])
                let listed = try await Snapshots.list(in: f.log)
                #expect(listed.map(\.versions) == [[Snapshots.StreamVersion(stream: "todo-home", version: 3)]])
                #expect(listed.first.map { String(decoding: $0.state, as: UTF8.self) } == #"{"done":[],"open":["other-1","other-1","pen"]}"#)
            }
        }
    }

    @Test("append(alsoWriting:) writes its rows with new events only: not for an idempotent retry, and nothing when it throws", arguments: Backend.allCases)
    func alsoWriting(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await f.log.openTables(["side"])
            let id = SequentialIDs.id(100)
            let append = [StreamAppend(stream: "s", events: [event("A", id: id)])]
            // When an append writes a row beside its events
            let first = try await f.log.append(append) { txn, results in
                try await txn.put("side", Array("row".utf8), Array("first \(results[0].positions)".utf8))
            }
            // Then both are there
            #expect(first.map(\.positions) == [[1]] && first.map(\.alreadyRecorded) == [false])
            #expect(try await f.log.readTables { txn in try await txn.get("side", Array("row".utf8)) } == Array("first [1]".utf8))
            // When the same append is retried
            let retried = try await f.log.append(append) { txn, _ in
                try await txn.put("side", Array("row".utf8), Array("retried".utf8))
            }
            // Then it is already recorded, and its body did not run
            #expect(retried.map(\.positions) == [[1]] && retried.map(\.alreadyRecorded) == [true])
            #expect(try await f.log.readTables { txn in try await txn.get("side", Array("row".utf8)) } == Array("first [1]".utf8))
            // When the body throws, then neither the events nor the row are written, and its error comes back
            struct Refused: Error, Equatable {}
            await #expect(throws: Refused()) {
                try await f.log.append([StreamAppend(stream: "s", events: [event("B")])]) { txn, _ in
                    try await txn.put("side", Array("other".utf8), Array("x".utf8))
                    throw Refused()
                }
            }
            #expect(try await f.log.headPosition() == 1)
            #expect(try await f.log.readTables { txn in try await txn.count("side") } == 1)
        }
    }

    func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}

/// Replaces the state of the store's only snapshot with `state`'s bytes, keeping its header.
func corruptSnapshot(_ log: any EventLog, state: String) async throws {
    let entry = try #require(try await Snapshots.list(in: log).first)
    var key = Array(entry.decider.utf8) + [0]
    for version in entry.versions { key += Array(version.stream.utf8) + [0] }
    let headerSize = entry.size - entry.state.count
    try await log.writeTables { [key] txn in
        let old = try await txn.get(Snapshots.table, key) ?? []
        try await txn.put(Snapshots.table, key, Array(old.prefix(headerSize)) + Array(state.utf8))
    }
}
