import EventStore
import Foundation
import Testing
import TestSupport

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

    @Test("a stream reads forward from a version with a limit")
    func streamForward() async throws {
        let f = try await seeded()
        #expect(try f.store.readStream("fitness-alice").map(\.position) == [1, 2, 5])
        #expect(try f.store.readStream("fitness-alice").map(\.version) == [1, 2, 3])
        #expect(try f.store.readStream("fitness-alice", from: 2).map(\.version) == [2, 3])
        #expect(try f.store.readStream("fitness-alice", from: 1, limit: 2).map(\.type) == ["GoalSet", "Started"])
        #expect(try f.store.readStream("fitness-alice", from: 4).isEmpty)
        #expect(try f.store.readStream("fitness-alice", limit: 0).isEmpty)
        #expect(try f.store.readStream("nobody").isEmpty)
    }

    @Test("a stream reads backward from a version with a limit")
    func streamBackward() async throws {
        let f = try await seeded()
        #expect(try f.store.readStream("fitness-alice", direction: .backward).map(\.version) == [3, 2, 1])
        #expect(try f.store.readStream("fitness-alice", from: 2, direction: .backward).map(\.version) == [2, 1])
        #expect(try f.store.readStream("fitness-alice", from: 99, direction: .backward, limit: 2).map(\.version) == [3, 2])
        #expect(try f.store.readStream("fitness-alice", from: 0, direction: .backward).isEmpty)
        #expect(try f.store.readStream("fitness-bob", direction: .backward).map(\.position) == [4])
    }

    @Test("the log reads from a position, through a position, with a limit and filters")
    func wholeLog() async throws {
        let f = try await seeded()
        #expect(try f.store.read().map(\.position) == [1, 2, 3, 4, 5, 6])
        #expect(try f.store.read(from: 3).map(\.position) == [3, 4, 5, 6])
        #expect(try f.store.read(from: 2, through: 4).map(\.position) == [2, 3, 4])
        #expect(try f.store.read(from: 2, limit: 2).map(\.position) == [2, 3])
        #expect(try f.store.read(from: 7).isEmpty)
        #expect(try f.store.read(from: 0, limit: 1).map(\.position) == [1])
        #expect(try f.store.read(filter: EventFilter(category: "fitness-")).map(\.position) == [1, 2, 4, 5])
        #expect(try f.store.read(filter: EventFilter(types: ["GoalSet", "Said"])).map(\.position) == [1, 3, 4, 6])
        #expect(try f.store.read(filter: EventFilter(category: "fitness-", types: ["GoalSet"])).map(\.position) == [1, 4])
        #expect(try f.store.read(filter: EventFilter(stream: "chat-main")).map(\.position) == [3, 6])
        #expect(try f.store.read(from: 2, limit: 2, filter: EventFilter(category: "fitness-")).map(\.position) == [2, 4])
    }

    @Test("the filter used on records agrees with the public matches(_:)")
    func filterAgreesWithMatches() async throws {
        let f = try await seeded()
        let all = try f.store.read()
        let filters = [
            EventFilter(), EventFilter(stream: "fitness-bob"), EventFilter(category: "chat"),
            EventFilter(category: "fitness-a", types: ["Walked"]), EventFilter(types: []),
        ]
        for filter in filters {
            #expect(try f.store.read(filter: filter) == all.filter(filter.matches))
        }
    }

    @Test("head, versions and statistics describe the log")
    func headAndStatistics() async throws {
        let empty = try StoreFixture()
        let emptyStats = try empty.store.statistics()
        #expect(emptyStats.eventCount == 0 && emptyStats.streamCount == 0)
        #expect(emptyStats.headPosition == 0 && emptyStats.firstPosition == 0)
        #expect(try empty.store.headPosition() == 0)

        let f = try await seeded()
        let stats = try f.store.statistics()
        #expect(stats.eventCount == 6)
        #expect(stats.streamCount == 3)
        #expect(stats.firstPosition == 1)
        #expect(stats.headPosition == 6)
        #expect(stats.pageSize == 4096)
        #expect(stats.fileSize > 0 && stats.fileSize <= stats.mapSize)
        #expect(try f.store.streamVersion("chat-main") == 2)
    }
}

@Suite("Reading across index chunks")
struct ChunkedReadTests {
    @Test("every start, direction and limit reads the versions it should, across full chunks and pending ones")
    func allReads() async throws {
        let f = try StoreFixture()
        // 41 events in "s", interleaved with another stream so positions and versions differ
        for n in 1...41 {
            _ = try await f.store.append([
                StreamAppend(stream: "s", events: [event("E", #"{"v":\#(n)}"#)]), StreamAppend(stream: "other", events: [event("O")]),
            ])
        }
        let all = try f.store.read(filter: EventFilter(stream: "s"))
        #expect(all.map(\.version) == Array(1...41))
        for start in [UInt64(1), 2, 15, 16, 17, 18, 32, 33, 40, 41, 42] {
            for limit in [1, 3, 16, 17, 100] {
                let forward = try f.store.readStream("s", from: start, limit: limit)
                #expect(forward == Array(all.filter { $0.version >= start }.prefix(limit)), "forward from \(start), limit \(limit)")
                let backward = try f.store.readStream("s", from: start, direction: .backward, limit: limit)
                #expect(backward == Array(all.filter { $0.version <= start }.reversed().prefix(limit)), "backward from \(start), limit \(limit)")
            }
        }
    }
}
