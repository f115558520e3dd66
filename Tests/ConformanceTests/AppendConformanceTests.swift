import EventStore
import EventStoreTesting
import Foundation
import Testing

@Suite("Appending, on every backend")
struct AppendConformanceTests {
    @Test("an append records every field: gapless positions, versions from 1, the clock's time, the generator's ids", arguments: Backend.allCases)
    func appendRecordsEveryField(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given an empty store
            // When two appends to two streams
            let first = try await f.log.append(
                to: "orders-1", events: [event("Placed", #"{"n":1}"#), event("Paid", metadata: #"{"by":"x"}"#)])
            let second = try await f.log.append(to: "orders-2", events: [event("Placed", "[]")])
            // Then the results and the whole log are exactly these
            #expect(first == AppendResult(stream: "orders-1", positions: [1, 2], version: 2, alreadyRecorded: false, ids: [SequentialIDs.id(1), SequentialIDs.id(2)], recordedAtMicroseconds: LogFixture.micros(ofRead: 0)))
            #expect(second == AppendResult(stream: "orders-2", positions: [3], version: 1, alreadyRecorded: false, ids: [SequentialIDs.id(3)], recordedAtMicroseconds: LogFixture.micros(ofRead: 1)))
            #expect(try await f.log.events() == [
                RecordedEvent(
                    position: 1, stream: "orders-1", version: 1, id: SequentialIDs.id(1), type: "Placed",
                    data: Data(#"{"n":1}"#.utf8), metadata: Data(), recordedAtMicroseconds: LogFixture.micros(ofRead: 0)),
                RecordedEvent(
                    position: 2, stream: "orders-1", version: 2, id: SequentialIDs.id(2), type: "Paid",
                    data: Data("{}".utf8), metadata: Data(#"{"by":"x"}"#.utf8),
                    recordedAtMicroseconds: LogFixture.micros(ofRead: 0)),
                RecordedEvent(
                    position: 3, stream: "orders-2", version: 1, id: SequentialIDs.id(3), type: "Placed",
                    data: Data("[]".utf8), metadata: Data(), recordedAtMicroseconds: LogFixture.micros(ofRead: 1)),
            ])
            #expect(try await f.log.headPosition() == 3)
            #expect(try await f.log.streamVersion("orders-1") == 2)
            #expect(try await f.log.streamVersion("orders-2") == 1)
            #expect(try await f.log.streamVersion("orders-3") == 0)
            #expect(try await f.log.verify().isClean)
        }
    }

    @Test("a version conflict names expected and actual and writes nothing", arguments: Backend.allCases)
    func conflict(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a stream at version 2
            _ = try await f.log.append(to: "s", events: [event("A"), event("B")])
            // When appending expecting version 1
            let error = await #expect(throws: EventStoreError.self) {
                try await f.log.append(to: "s", events: [event("C")], expectedVersion: .exact(1))
            }
            // Then a conflict, and the log unchanged
            #expect(error?.code == .versionConflict)
            #expect(error?.conflicts == [VersionConflict(stream: "s", expected: .exact(1), actual: 2)])
            #expect(try await f.log.headPosition() == 2)
        }
    }

    @Test("a caller's id is kept, and binary data and metadata come back byte for byte", arguments: Backend.allCases)
    func callerIDAndBytesAreKept(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let id = UUID()
            let bytes = Data((0...255).map { UInt8($0) })
            _ = try await f.log.append(to: "s", events: [NewEvent(id: id, type: "T", data: bytes, metadata: bytes)])
            let stored = try #require(try await f.log.event(at: 1))
            #expect(stored.id == id)
            #expect(stored.data == bytes)
            #expect(stored.metadata == bytes)
            #expect(try await f.log.event(at: 2) == nil)
        }
    }

    @Test("recordedAt converts the stored microseconds to a Date", arguments: Backend.allCases)
    func recordedAtIsTheClocksTime(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "s", events: [event("T")])
            let stored = try #require(try await f.log.event(at: 1))
            #expect(stored.recordedAt == Date(timeIntervalSince1970: 1_767_225_600))
        }
    }

    @Test("a store reopened after close keeps everything, and positions and versions continue", arguments: Backend.allCases)
    func reopenKeepsEverything(_ backend: Backend) async throws {
        try await withLog(backend, durability: .full) { f in
            _ = try await f.log.append(to: "a", events: [event("One"), event("Two")])
            _ = try await f.log.append(to: "b", events: [event("Three")])
            let before = try await f.log.events()

            try await f.reopen()
            #expect(try await f.log.events() == before)
            let next = try await f.log.append(to: "a", events: [event("Four")], expectedVersion: .exact(2))
            #expect(next == AppendResult(stream: "a", positions: [4], version: 3, alreadyRecorded: false, ids: [SequentialIDs.id(4)], recordedAtMicroseconds: LogFixture.micros(ofRead: 2)))
            #expect(try await f.log.statistics().streamCount == 2)
        }
    }

    @Test("a closed store refuses appends and reads with the closed error", arguments: Backend.allCases)
    func closedStoreRefusesWork(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            await f.log.close()
            #expect(isClosed(f.log))
            let appendError = await #expect(throws: EventStoreError.self) {
                try await f.log.append(to: "s", events: [event("T")])
            }
            #expect(appendError?.code == .closed)
            let readError = await #expect(throws: EventStoreError.self) { try await f.log.events() }
            #expect(readError?.code == .closed)
            await f.log.close()  // idempotent
        }
    }
}
