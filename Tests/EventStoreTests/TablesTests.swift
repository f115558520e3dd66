@testable import EventStoreCore
@testable import EventStoreLMDB
import Foundation
import Testing
import TestSupport

@Suite("Tables beside the log")
struct TablesTests {
    struct Refused: Error {}

    @Test("a write commits atomically with the log and is read back in a snapshot")
    func writeAndRead() async throws {
        let f = try StoreFixture()
        try await f.store.openTables(["fruit", "meta"])
        _ = try await f.store.append(to: "s", events: [event("E")])
        let head = try await f.store.writeTables { txn -> UInt64 in
            try await txn.put("fruit", Array("apple".utf8), [1])
            try await txn.put("fruit", Array("banana".utf8), [2])
            try await txn.put("fruit", Array("cherry".utf8), [3])
            try await txn.put("meta", [0], Array("x".utf8))
            return try await txn.headPosition()
        }
        #expect(head == 1)
        let rows = try await f.store.readTables { txn in
            var rows: [String] = []
            try await txn.scan("fruit") { key, value in
                rows.append("\(String(decoding: key, as: UTF8.self))=\(value.first ?? 0)")
                return true
            }
            return rows
        }
        #expect(rows == ["apple=1", "banana=2", "cherry=3"])
        #expect(try await f.store.readTables { try await $0.get("meta", [0]) } == Array("x".utf8))
        #expect(try await f.store.readTables { try await $0.count("fruit") } == 3)
    }

    @Test("a closure that throws keeps nothing it wrote, and its error reaches the caller")
    func throwingWriteKeepsNothing() async throws {
        let f = try StoreFixture()
        try await f.store.openTables(["t"])
        await #expect(throws: Refused.self) {
            try await f.store.writeTables { txn in
                try await txn.put("t", [1], [1])
                throw Refused()
            }
        }
        #expect(try await f.store.readTables { try await $0.get("t", [1]) } == nil)
    }

    @Test("a read closure's own error comes back as it was thrown")
    func readErrorsPassThrough() async throws {
        let f = try StoreFixture()
        try await f.store.openTables(["t"])
        await #expect(throws: Refused.self) { try await f.store.readTables { _ in throw Refused() } }
    }

    @Test("scans follow a prefix, forward and backward")
    func prefixScans() async throws {
        let f = try StoreFixture()
        try await f.store.openTables(["t"])
        let keys: [[UInt8]] = [[1], [1, 0], [1, 5], [1, 0xFF], [1, 0xFF, 0xFF], [2], [2, 1]]
        try await f.store.writeTables { txn in
            for key in keys { try await txn.put("t", key, []) }
        }
        func scan(_ prefix: [UInt8], reverse: Bool, limit: Int = .max) async throws -> [[UInt8]] {
            try await f.store.readTables { txn in
                var found: [[UInt8]] = []
                try await txn.scan("t", prefix: prefix, reverse: reverse) { key, _ in
                    found.append(Array(key))
                    return found.count < limit
                }
                return found
            }
        }
        #expect(try await scan([1], reverse: false) == Array(keys[0...4]))
        #expect(try await scan([1], reverse: true) == Array(keys[0...4].reversed()))
        #expect(try await scan([1, 0xFF], reverse: true) == [[1, 0xFF, 0xFF], [1, 0xFF]])
        #expect(try await scan([2], reverse: true, limit: 1) == [[2, 1]])
        #expect(try await scan([], reverse: true, limit: 2) == [[2, 1], [2]])
        #expect(try await scan([3], reverse: false).isEmpty)
        #expect(try await scan([3], reverse: true).isEmpty)
        #expect(try await scan([0], reverse: true).isEmpty)
    }

    @Test("removeAll empties a table; delete reports whether the key was there")
    func removing() async throws {
        let f = try StoreFixture()
        try await f.store.openTables(["t"])
        let deleted = try await f.store.writeTables { txn -> [Bool] in
            try await txn.put("t", [1], [])
            try await txn.put("t", [2], [])
            return [try await txn.delete("t", [1]), try await txn.delete("t", [9])]
        }
        #expect(deleted == [true, false])
        try await f.store.writeTables { txn in try await txn.removeAll("t") }
        #expect(try await f.store.readTables { try await $0.count("t") } == 0)
    }

    @Test("misuse is an error, not a crash: unopened tables, bad keys, writes in a read, escaped transactions")
    func misuse() async throws {
        let f = try StoreFixture()
        try await f.store.openTables(["t"])
        let unopened = await #expect(throws: EventStoreError.self) { try await f.store.readTables { try await $0.get("never", [1]) } }
        #expect(unopened?.code == .notFound)
        await #expect(throws: EventStoreError.self) { try await f.store.writeTables { try await $0.put("t", [], [1]) } }
        await #expect(throws: EventStoreError.self) { try await f.store.writeTables { try await $0.put("t", Array(repeating: 1, count: 512), [1]) } }
        await #expect(throws: EventStoreError.self) { try await f.store.readTables { try await $0.put("t", [1], [1]) } }
        var kept: TableTransaction?
        try await f.store.readTables { kept = $0 }
        let escaped = try #require(kept)
        await #expect(throws: EventStoreError.self) { try await escaped.get("t", [1]) }
        await #expect(throws: EventStoreError.self) { try await f.store.openTables(["bad\nname"]) }
    }

    @Test("forEachEvent reads the log inside the transaction, filtered by type, and says where it stopped")
    func eventsInATransaction() async throws {
        let f = try StoreFixture()
        _ = try await f.store.append(to: "s", events: [event("A"), event("B"), event("A"), event("C")])
        let (seen, last) = try await f.store.readTables { txn -> ([UInt64], UInt64) in
            var seen: [UInt64] = []
            let last = try await txn.forEachEvent(from: 2, through: 3, types: ["A", "B"]) { event in
                seen.append(event.position)
                return true
            }
            return (seen, last)
        }
        #expect(seen == [2, 3] && last == 3)
        let stopped = try await f.store.readTables { txn in try await txn.forEachEvent(from: 1, types: ["C"]) { _ in true } }
        #expect(stopped == 4)
        let empty = try await f.store.readTables { txn in try await txn.forEachEvent(from: 9) { _ in true } }
        #expect(empty == 8)
    }

    @Test("waitForCommit returns once the head moves past a position")
    func waitingForACommit() async throws {
        let f = try StoreFixture()
        let store = f.store
        _ = try await store.append(to: "s", events: [event("A")])
        #expect(try await store.waitForCommit(after: 0) == 1)
        let waiter = Task { try await store.waitForCommit(after: 1) }
        try await withTimeout(.seconds(10), "the waiter to wait") {
            while store.headSignal.waiterCount == 0 { await Task.yield() }
        }
        _ = try await store.append(to: "s", events: [event("B")])
        #expect(try await withTimeout(.seconds(10), "the commit") { try await waiter.value } == 2)
    }
}
