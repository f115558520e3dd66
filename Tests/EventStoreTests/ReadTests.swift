import EventStore
import Foundation
import Testing
import TestSupport

// The reads of the protocol run on every backend in ConformanceTests/ReadConformanceTests.swift;
// these are the LMDB store's own: its lazy ranges, its statistics, and reading in place.
@Suite("Reading")
struct ReadTests {
    /// Given: fitness-alice 1..3, chat-main 1..2, fitness-bob 1, interleaved.
    func seeded() async throws -> StoreFixture {
        let f = try StoreFixture()
        _ = try await f.store.append(to: "fitness-alice", events: [event("GoalSet"), event("Started")])
        _ = try await f.store.append(to: "chat-main", events: [event("Said")])
        _ = try await f.store.append(to: "fitness-bob", events: [event("GoalSet")])
        _ = try await f.store.append(to: "fitness-alice", events: [event("Walked")])
        _ = try await f.store.append(to: "chat-main", events: [event("Said")])
        return f
    }

    @Test("events(...) reads a range lazily, a page at a time, as read(...) would return it")
    func lazyRange() async throws {
        let f = try await seeded()
        func collect(_ events: LogEvents) async throws -> [UInt64] {
            var positions: [UInt64] = []
            for try await event in events { positions.append(event.position) }
            return positions
        }
        for pageSize in [1, 2, 3, 256] {
            #expect(try await collect(f.store.events(pageSize: pageSize)) == [1, 2, 3, 4, 5, 6], "page size \(pageSize)")
            #expect(try await collect(f.store.events(filter: EventFilter(category: "chat"), pageSize: pageSize)) == [3, 6])
            #expect(try await collect(f.store.events(from: 2, through: 4, pageSize: pageSize)) == [2, 3, 4])
            #expect(try await collect(f.store.events(from: 2, through: 4, filter: EventFilter(types: ["Said"]), pageSize: pageSize)) == [3])
        }
        #expect(try await collect(f.store.events(from: 7)).isEmpty)
        #expect(try await collect(f.store.events(from: 0, through: 0)).isEmpty)
        var all: [RecordedEvent] = []
        for try await event in f.store.events(pageSize: 4) { all.append(event) }
        #expect(all == (try f.store.read(limit: .max)))
    }

    @Test("the range ends at the head as it was when iteration started; cancelling stops it between pages")
    func lazyRangeEnds() async throws {
        let f = try await seeded()
        var iterator = f.store.events(pageSize: 2).makeAsyncIterator()
        #expect(try await iterator.next()?.position == 1)
        _ = try await f.store.append(to: "late", events: [event("Late")])
        var rest: [UInt64] = []
        while let event = try await iterator.next() { rest.append(event.position) }
        #expect(rest == [2, 3, 4, 5, 6])
        let store = f.store
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = store.events(pageSize: 1).makeAsyncIterator()
            return try await iterator.next()
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
    }

    // Counts, head and versions run on every backend in ConformanceTests/ReadConformanceTests.swift;
    // the page and map sizes are LMDB's.
    @Test("statistics give LMDB's page size, and a file within the map")
    func lmdbStatistics() async throws {
        let f = try await seeded()
        let stats = try f.store.statistics()
        #expect(stats.pageSize == 4096)
        #expect(stats.fileSize > 0 && stats.fileSize <= stats.mapSize)
    }
}

@Suite("Reading a stream in place")
struct InPlaceReadTests {
    struct Stop: Error, Equatable {}

    /// Given: "s" with 20 events (one full index chunk and 4 pending), interleaved with "other".
    func seeded() async throws -> StoreFixture {
        let f = try StoreFixture()
        for n in 1...20 {
            _ = try await f.store.append([
                StreamAppend(stream: "s", events: [event("E\(n % 3)", #"{"v":\#(n)}"#, metadata: n % 2 == 0 ? "{\"m\":1}" : "")]),
                StreamAppend(stream: "other", events: [event("O")]),
            ])
        }
        return f
    }

    @Test("in place, a stream reads the events the whole log holds for it, every field, as readStream does")
    func sameAsCopies() async throws {
        let f = try await seeded()
        for (start, direction, limit) in [(nil, ReadDirection.forward, Int.max), (3, .forward, 15), (nil, .backward, 10), (17, .backward, 5), (99, .forward, 1)] as [(UInt64?, ReadDirection, Int)] {
            var viewed: [RecordedEvent] = []
            var fields: [String] = []
            let count = try f.store.forEachEvent(inStream: "s", from: start, direction: direction, limit: limit) { view in
                viewed.append(view.recordedEvent())
                fields.append("\(view.position) \(view.stream) \(view.version) \(view.type) \(String(decoding: view.data, as: UTF8.self)) \(view.metadata.count)")
                #expect(Array(view.streamUTF8) == Array("s".utf8) && Array(view.typeUTF8) == Array(view.type.utf8))
            }
            // Compared with the whole log's read, which does not go through the stream index
            let all = try f.store.read(limit: .max, filter: EventFilter(stream: "s"))
            let first = start ?? (direction == .forward ? 1 : 20)
            let expected = direction == .forward
                ? Array(all.filter { $0.version >= first }.prefix(limit)) : Array(all.filter { $0.version <= first }.reversed().prefix(limit))
            let copied = try f.store.readStream("s", from: start, direction: direction, limit: limit)
            #expect(viewed == expected && copied == expected, "from \(String(describing: start)) \(direction) limit \(limit)")
            #expect(count == copied.count)
            #expect(fields == copied.map { "\($0.position) s \($0.version) \($0.type) \(String(decoding: $0.data, as: UTF8.self)) \($0.metadata.count)" })
        }
    }

    @Test("an error thrown by the caller's closure ends the read and comes back as it was thrown")
    func callerErrorPropagates() async throws {
        let f = try await seeded()
        var seen: [UInt64] = []
        #expect(throws: Stop()) {
            try f.store.forEachEvent(inStream: "s", direction: .backward) { view in
                seen.append(view.version)
                if seen.count == 6 { throw Stop() }
            }
        }
        #expect(seen == [20, 19, 18, 17, 16, 15])
        // The read transaction went back to the pool: the store still reads and writes.
        _ = try await f.store.append(to: "s", events: [event("E")])
        #expect(try f.store.streamVersion("s") == 21)
    }

    @Test("stopping by throwing works in both directions, at a chunk's edge too, and the store's own errors pass through unchanged")
    func stopsAnywhere() async throws {
        let f = try await seeded()
        for (direction, stopAt, expected) in [(ReadDirection.forward, 16, Array(UInt64(1)...16)), (.forward, 17, Array(UInt64(1)...17)), (.backward, 5, Array((UInt64(16)...20).reversed()))] {
            var seen: [UInt64] = []
            #expect(throws: Stop()) {
                try f.store.forEachEvent(inStream: "s", direction: direction) { view in
                    seen.append(view.version)
                    if seen.count == stopAt { throw Stop() }
                }
            }
            #expect(seen == expected, "\(direction) stopping after \(stopAt)")
        }
        let thrown = EventStoreError(.notFound, "Not this one.")
        let passed = #expect(throws: EventStoreError.self) {
            try f.store.forEachEvent(inStream: "s") { _ in throw thrown }
        }
        #expect(passed == thrown, "the caller's own EventStoreError comes back as it was, not wrapped")
    }

    @Test("from version 0, empty data and metadata, and the recorded time")
    func fieldsAtTheEdges() async throws {
        let f = try await seeded()
        _ = try await f.store.append(to: "empty", events: [NewEvent(type: "Nothing", data: Data(), metadata: Data())])
        var forward: [UInt64] = []
        try f.store.forEachEvent(inStream: "s", from: 0, limit: 2) { forward.append($0.version) }
        #expect(forward == [1, 2])
        #expect(try f.store.forEachEvent(inStream: "s", from: 0, direction: .backward) { _ in } == 0)
        let stored = try #require(try f.store.readStream("empty").first)
        try f.store.forEachEvent(inStream: "empty") { view in
            #expect(view.data.isEmpty && view.metadata.isEmpty && Data(view.data).isEmpty)
            #expect(view.recordedAt == stored.recordedAt && view.recordedAtMicroseconds == stored.recordedAtMicroseconds)
            #expect(view.id == stored.id && view.stream == "empty" && view.type == "Nothing")
        }
    }

    @Test("a closed store refuses to read in place")
    func closed() async throws {
        let f = try await seeded()
        await f.store.close()
        var calls = 0
        let error = #expect(throws: EventStoreError.self) { try f.store.forEachEvent(inStream: "s") { _ in calls += 1 } }
        #expect(error?.code == .closed)
        #expect(calls == 0)
    }

    @Test("an unknown stream, a zero limit and a negative limit")
    func edges() async throws {
        let f = try await seeded()
        var calls = 0
        #expect(try f.store.forEachEvent(inStream: "nobody") { _ in calls += 1 } == 0)
        #expect(try f.store.forEachEvent(inStream: "s", limit: 0) { _ in calls += 1 } == 0)
        #expect(calls == 0)
        let error = #expect(throws: EventStoreError.self) { try f.store.forEachEvent(inStream: "s", limit: -1) { _ in } }
        #expect(error?.code == .invalidInput)
    }
}
