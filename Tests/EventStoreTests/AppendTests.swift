import EventStore
import Foundation
import Testing
import TestSupport

@Suite("Appending")
struct AppendTests {
    @Test("an append records every field: gapless positions, versions from 1, the clock's time, the generator's ids")
    func appendRecordsEveryField() async throws {
        // Given an empty store
        let f = try StoreFixture()
        // When two appends to two streams
        let first = try await f.store.append(
            to: "orders-1", events: [event("Placed", #"{"n":1}"#), event("Paid", metadata: #"{"by":"x"}"#)])
        let second = try await f.store.append(to: "orders-2", events: [event("Placed", "[]")])
        // Then the results and the whole log are exactly these
        #expect(first == AppendResult(stream: "orders-1", positions: [1, 2], version: 2, alreadyRecorded: false, ids: [SequentialIDs.id(1), SequentialIDs.id(2)], recordedAtMicroseconds: StoreFixture.micros(ofRead: 0)))
        #expect(second == AppendResult(stream: "orders-2", positions: [3], version: 1, alreadyRecorded: false, ids: [SequentialIDs.id(3)], recordedAtMicroseconds: StoreFixture.micros(ofRead: 1)))
        #expect(try f.store.read(limit: .max) == [
            RecordedEvent(
                position: 1, stream: "orders-1", version: 1, id: SequentialIDs.id(1), type: "Placed",
                data: Data(#"{"n":1}"#.utf8), metadata: Data(), recordedAtMicroseconds: StoreFixture.micros(ofRead: 0)),
            RecordedEvent(
                position: 2, stream: "orders-1", version: 2, id: SequentialIDs.id(2), type: "Paid",
                data: Data("{}".utf8), metadata: Data(#"{"by":"x"}"#.utf8),
                recordedAtMicroseconds: StoreFixture.micros(ofRead: 0)),
            RecordedEvent(
                position: 3, stream: "orders-2", version: 1, id: SequentialIDs.id(3), type: "Placed",
                data: Data("[]".utf8), metadata: Data(), recordedAtMicroseconds: StoreFixture.micros(ofRead: 1)),
        ])
        #expect(try f.store.headPosition() == 3)
        #expect(try f.store.streamVersion("orders-1") == 2)
        #expect(try f.store.streamVersion("orders-2") == 1)
        #expect(try f.store.streamVersion("orders-3") == 0)
    }

    @Test("a caller's id is kept, and binary data and metadata come back byte for byte")
    func callerIDAndBytesAreKept() async throws {
        let f = try StoreFixture()
        let id = UUID()
        let bytes = Data((0...255).map { UInt8($0) })
        _ = try await f.store.append(to: "s", events: [NewEvent(id: id, type: "T", data: bytes, metadata: bytes)])
        let stored = try #require(try f.store.event(at: 1))
        #expect(stored.id == id)
        #expect(stored.data == bytes)
        #expect(stored.metadata == bytes)
        #expect(try f.store.event(at: 2) == nil)
    }

    @Test("recordedAt converts the stored microseconds to a Date")
    func recordedAtIsTheClocksTime() async throws {
        let f = try StoreFixture()
        _ = try await f.store.append(to: "s", events: [event("T")])
        let stored = try #require(try f.store.event(at: 1))
        #expect(stored.recordedAt == Date(timeIntervalSince1970: 1_767_225_600))
    }

    @Test("a store reopened after close keeps everything, and positions and versions continue")
    func reopenKeepsEverything() async throws {
        let f = try StoreFixture(durability: .full)
        _ = try await f.store.append(to: "a", events: [event("One"), event("Two")])
        _ = try await f.store.append(to: "b", events: [event("Three")])
        let before = try f.store.read(limit: .max)
        f.store.close()

        let reopened = try f.reopen()
        defer { reopened.close() }
        #expect(try reopened.read(limit: .max) == before)
        let next = try await reopened.append(to: "a", events: [event("Four")], expectedVersion: .exact(2))
        #expect(next == AppendResult(stream: "a", positions: [4], version: 3, alreadyRecorded: false, ids: [SequentialIDs.id(4)], recordedAtMicroseconds: StoreFixture.micros(ofRead: 2)))
        #expect(try reopened.statistics().streamCount == 2)
    }

    @Test("a closed store refuses appends and reads with the closed error")
    func closedStoreRefusesWork() async throws {
        let f = try StoreFixture()
        f.store.close()
        #expect(f.store.closed)
        let appendError = await #expect(throws: EventStoreError.self) {
            try await f.store.append(to: "s", events: [event("T")])
        }
        #expect(appendError?.code == .closed)
        let readError = #expect(throws: EventStoreError.self) { try f.store.read(limit: .max) }
        #expect(readError?.code == .closed)
        f.store.close()  // idempotent
    }
}
