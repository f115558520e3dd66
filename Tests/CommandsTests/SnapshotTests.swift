import Commands
import EventStore
import EventStoreTesting
import Foundation
import Testing

/// Snapshots of a decider's state: written with the append that makes one due, read instead of
/// the events before it, and never the reason for another outcome.
@Suite("Snapshots")
struct SnapshotTests {
    func handler(_ store: EventStore, interval: Int) -> CommandHandler {
        CommandHandler(store: store, configuration: CommandHandler.Configuration(snapshotInterval: interval))
    }

    /// Runs the same commands through the handler generic over `StreamDecider` (no snapshots).
    func withoutSnapshots<D: StreamDecider>(_ handler: CommandHandler, _ command: D.Command, _ decider: D) async throws -> CommandOutcome<D> {
        try await handler.handle(command, with: decider)
    }

    @Test("a snapshot is written with the append that reaches the interval, at exactly the versions committed")
    func writtenWhenDue() async throws {
        try await TemporaryStore.with { store in
            let handler = handler(store, interval: 3)
            let home = TodoDecider(list: "home")
            for item in ["a", "b"] { _ = try await handler.handle(.add(item), with: home) }
            #expect(try await Snapshots.list(in: store).isEmpty)
            _ = try await handler.handle(.add("c"), with: home)
            var listed = try await Snapshots.list(in: store)
            #expect(listed.map(\.decider) == ["todo"])
            #expect(listed.map(\.versions) == [[Snapshots.StreamVersion(stream: "todo-home", version: 3)]])
            #expect(listed.first.map { String(decoding: $0.state, as: UTF8.self) } == #"{"done":[],"open":["a","b","c"]}"#)
            // Two more commands are not due; the third is.
            _ = try await handler.handle(.add("d"), with: home)
            _ = try await handler.handle(.complete("a"), with: home)
            #expect(try await Snapshots.list(in: store).first?.versions.first?.version == 3)
            _ = try await handler.handle(.add("e"), with: home)
            listed = try await Snapshots.list(in: store)
            #expect(listed.first?.versions.first?.version == 6)
            #expect(listed.first.map { String(decoding: $0.state, as: UTF8.self) } == #"{"done":["a"],"open":["b","c","d","e"]}"#)
            // Refusals and commands with nothing to do write nothing.
            await #expect(throws: TodoRefused.self) { try await handler.handle(.add("e"), with: home) }
            #expect(try await Snapshots.list(in: store).first?.versions.first?.version == 6)
        }
    }

    @Test("with snapshots every command decides the same events and state as without, for random commands", arguments: [1, 2, 5])
    func sameOutcomes(interval: Int) async throws {
        try await TemporaryStore.with { withSnapshots in
            try await TemporaryStore.with { plain in
                var random = SeededGenerator(seed: UInt64(interval) * 7_919)
                let snapshotting = handler(withSnapshots, interval: interval)
                let reference = handler(plain, interval: 1_000_000)
                let items = ["a", "b", "c", "d"]
                for _ in 0..<150 {
                    let list = ["home", "work"].randomElement(using: &random) ?? "home"
                    let item = items.randomElement(using: &random) ?? "a"
                    let command: TodoCommand = [.add(item), .complete(item), .nothing].randomElement(using: &random) ?? .nothing
                    let decider = TodoDecider(list: list, archives: list == "work")
                    let snapshotted = await outcome { try await snapshotting.handle(command, with: decider) }
                    let folded = await outcome { try await withoutSnapshots(reference, command, decider) }
                    switch (snapshotted, folded) {
                    case let (.success(a), .success(b)):
                        #expect(a.events == b.events && a.state == b.state, "\(command) on \(list)")
                    case let (.failure(a), .failure(b)):
                        #expect("\(a)" == "\(b)")
                    default:
                        Issue.record("\(command) on \(list): \(snapshotted) with snapshots, \(folded) without")
                    }
                }
                let snapshots = try await Snapshots.list(in: withSnapshots)
                #expect(!snapshots.isEmpty)
                for list in ["home", "work"] {
                    let decider = TodoDecider(list: list, archives: list == "work")
                    let fromSnapshot = try await snapshotting.state(of: decider).state
                    let folded = try await reference.state(of: decider).state
                    #expect(fromSnapshot == folded)
                }
            }
        }
    }

    @Test("a snapshot of another decider version is ignored, then replaced when the next one is due")
    func otherVersionIgnored() async throws {
        try await TemporaryStore.with { store in
            let handler = handler(store, interval: 2)
            for item in ["a", "b"] { _ = try await handler.handle(.add(item), with: TodoDecider(list: "home")) }
            // Given the stored snapshot of version 1 made to lie about the state
            try await corrupt(store, state: #"{"done":[],"open":["lie"]}"#)
            var next = TodoDecider(list: "home")
            next.snapshotVersion = 2
            // When the decider of version 2 loads, then it folds from the first event
            #expect(try await handler.state(of: next).state == TodoState(open: ["a", "b"], done: []))
            // And version 1 reads the lie (the snapshot is its own), which shows it is read at all
            #expect(try await handler.state(of: TodoDecider(list: "home")).state == TodoState(open: ["lie"], done: []))
            // And the next due snapshot is of version 2
            for item in ["c", "d"] { _ = try await handler.handle(.add(item), with: next) }
            #expect(try await Snapshots.list(in: store).map(\.deciderVersion) == [2])
            #expect(try await handler.state(of: next).state == TodoState(open: ["a", "b", "c", "d"], done: []))
        }
    }

    @Test("a snapshot that does not decode is passed over and replaced; deleting snapshots changes nothing")
    func corruptIgnored() async throws {
        try await TemporaryStore.with { store in
            let handler = handler(store, interval: 2)
            let home = TodoDecider(list: "home")
            for item in ["a", "b"] { _ = try await handler.handle(.add(item), with: home) }
            try await corrupt(store, state: "not json")
            // The command folds from the first event, and (three events since a usable snapshot)
            // writes a new one.
            let outcome = try await handler.handle(.add("c"), with: home)
            #expect(outcome.state == TodoState(open: ["a", "b", "c"], done: []))
            let listed = try await Snapshots.list(in: store)
            #expect(listed.first?.versions.first?.version == 3)
            #expect(listed.first.map { String(decoding: $0.state, as: UTF8.self) } == #"{"done":[],"open":["a","b","c"]}"#)
            _ = try await handler.handle(.add("d"), with: home)
            #expect(try await Snapshots.drop(in: store) == 1)
            #expect(try await Snapshots.list(in: store).isEmpty)
            #expect(try await handler.state(of: home).state == TodoState(open: ["a", "b", "c", "d"], done: []))
        }
    }

    @Test("events before the snapshot are not read again: an event passed over before it is not reported again")
    func readsOnlyTheTail() async throws {
        try await TemporaryStore.with { store in
            let handler = handler(store, interval: 2)
            let home = TodoDecider(list: "home")
            _ = try await store.append(to: "todo-home", events: [NewEvent(type: "Mystery", data: Data("{}".utf8))])
            let first = try await handler.handle(.add("a"), with: home)
            #expect(first.passedOver.map(\.position) == [1])
            // The snapshot written with that append covers the mystery event.
            let later = try await handler.handle(.add("b"), with: home)
            #expect(later.passedOver.isEmpty)
            #expect(later.state == TodoState(open: ["a", "b"], done: []))
        }
    }

    @Test("a decider over two streams keeps both versions; drop by stream removes the snapshots that include it")
    func twoStreams() async throws {
        try await TemporaryStore.with { store in
            let handler = handler(store, interval: 2)
            let work = TodoDecider(list: "work", archives: true)
            _ = try await handler.handle(.add("a"), with: work)
            _ = try await handler.handle(.complete("a"), with: work)
            #expect(try await Snapshots.list(in: store).first?.versions == [
                Snapshots.StreamVersion(stream: "todo-work", version: 2), Snapshots.StreamVersion(stream: "archive-work", version: 1),
            ])
            _ = try await handler.handle(.add("x"), with: TodoDecider(list: "home"))
            _ = try await handler.handle(.add("y"), with: TodoDecider(list: "home"))
            #expect(try await Snapshots.list(in: store).count == 2)
            #expect(try await Snapshots.drop(in: store, stream: "archive-work") == 1)
            #expect(try await Snapshots.list(in: store).map(\.versions.first?.stream) == ["todo-home"])
        }
    }

    func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// Replaces the state in the one stored snapshot, keeping its header.
    func corrupt(_ store: EventStore, state: String) async throws {
        let entry = try #require(try await Snapshots.list(in: store).first)
        var key = Array(entry.decider.utf8) + [0]
        for version in entry.versions { key += Array(version.stream.utf8) + [0] }
        let headerSize = entry.size - entry.state.count
        try await store.writeTables { [key] txn in
            let old = try txn.get(Snapshots.table, key) ?? []
            try txn.put(Snapshots.table, key, Array(old.prefix(headerSize)) + Array(state.utf8))
        }
    }
}
