import EventStore
import Foundation
import Testing
import TestSupport

/// Calling the store from inside its own transactions is caught, and a store released on its own
/// writer thread closes without waiting for itself.
@Suite("Reentrancy and closing", .serialized)
struct ReentrancyTests {
    @Test("a store whose last reference a table-write closure held closes on the writer thread, without hanging", arguments: 0..<30)
    func releasedOnItsWriterThread(round: Int) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path
        try await withTimeout(.seconds(20), "the write through a closure holding the store (round \(round))") {
            try await Self.writeHoldingTheStore(path)
        }
        // The directory opens again once the store closed (it is claimed until then).
        try await withTimeout(.seconds(20), "the store released on its writer thread to close (round \(round))") {
            while true {
                if let again = try? EventStore(path: directory.path) {
                    await again.close()
                    return
                }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    /// Writes through a closure that holds the only other reference to the store.
    private static func writeHoldingTheStore(_ path: String) async throws {
        let store = try EventStore(path: path)
        try await store.openTables(["t"])
        try await store.writeTables { [store] txn in
            try await txn.put("t", [1], [UInt8(truncatingIfNeeded: store.path.count)])
        }
    }

    @Test("calling the store from inside a read, a stream read or a table write is refused with invalidInput")
    func nestedCallsAreRefused() async throws {
        ReentrancyWatchdog.throwsInDebugBuilds.store(true, ordering: .relaxed)
        defer { ReentrancyWatchdog.throwsInDebugBuilds.store(false, ordering: .relaxed) }
        let f = try StoreFixture()
        _ = try await f.store.append(to: "s", events: [event("A")])
        try await f.store.openTables(["t"])
        let message = "The store was called (a read) from inside a read or a table transaction's closure; copy what you need out of the closure and call the store after it returns."
        // Inside readTables, whose snapshot holds nothing a read waits for, reads are fine; an
        // append, which a growing map would make wait for the snapshot, is refused
        #expect(try await f.store.readTables { _ in try f.store.headPosition() } == 1)
        let fromRead = await #expect(throws: EventStoreError.self) {
            try await f.store.readTables { _ in try await f.store.append(to: "s", events: [event("B")]) }
        }
        #expect(fromRead?.code == .invalidInput)
        #expect(
            fromRead?.message
                == "The store was called (a write) from inside a table transaction's closure, which would wait for itself; copy what you need out of the closure and call the store after it returns.")
        // Inside forEachEvent
        let fromStreamRead = #expect(throws: EventStoreError.self) {
            try f.store.forEachEvent(inStream: "s") { _ in _ = try f.store.readStream("s") }
        }
        #expect(fromStreamRead?.message == message)
        // Inside writeTables (on the writer thread)
        let store = f.store
        let fromWrite = await #expect(throws: EventStoreError.self) { try await store.writeTables { _ in try store.read(limit: .max) } }
        #expect(fromWrite?.message == message)
        let appendFromWrite = await #expect(throws: EventStoreError.self) {
            try await store.writeTables { _ in try await store.append(to: "s", events: [event("C")]) }
        }
        #expect(appendFromWrite?.code == .invalidInput)
        #expect(try f.store.readStream("s").count == 1, "nothing was appended from inside a closure")
        // Closing from inside is ignored: the store stays open
        try await f.store.readTables { _ in f.store.close() }
        try await f.store.writeTables { _ in store.close() }
        #expect(!f.store.closed)
        #expect(try f.store.headPosition() == 1)
    }
}
