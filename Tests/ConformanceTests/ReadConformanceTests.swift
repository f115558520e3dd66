import EventStore
import EventStoreTesting
import Foundation
import Testing

@Suite("Reading, on every backend")
struct ReadConformanceTests {
    /// Given: fitness-alice 1..3, chat-main 1..2, fitness-bob 1, interleaved.
    func seed(_ log: any EventLog) async throws {
        _ = try await log.append(to: "fitness-alice", events: [event("GoalSet"), event("Started")])
        _ = try await log.append(to: "chat-main", events: [event("Said")])
        _ = try await log.append(to: "fitness-bob", events: [event("GoalSet")])
        _ = try await log.append(to: "fitness-alice", events: [event("Walked")])
        _ = try await log.append(to: "chat-main", events: [event("Said")])
    }

    @Test("a stream reads forward from a version with a limit", arguments: Backend.allCases)
    func streamForward(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await seed(f.log)
            #expect(try await f.log.events(of: "fitness-alice").map(\.position) == [1, 2, 5])
            #expect(try await f.log.events(of: "fitness-alice").map(\.version) == [1, 2, 3])
            #expect(try await f.log.events(of: "fitness-alice", from: 2).map(\.version) == [2, 3])
            #expect(try await f.log.events(of: "fitness-alice", from: 1, limit: 2).map(\.type) == ["GoalSet", "Started"])
            #expect(try await f.log.events(of: "fitness-alice", from: 4).isEmpty)
            #expect(try await f.log.events(of: "fitness-alice", limit: 0).isEmpty)
            #expect(try await f.log.events(of: "nobody").isEmpty)
        }
    }

    @Test("a stream reads backward from a version with a limit", arguments: Backend.allCases)
    func streamBackward(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await seed(f.log)
            #expect(try await f.log.events(of: "fitness-alice", direction: .backward).map(\.version) == [3, 2, 1])
            #expect(try await f.log.events(of: "fitness-alice", from: 2, direction: .backward).map(\.version) == [2, 1])
            #expect(try await f.log.events(of: "fitness-alice", from: 99, direction: .backward, limit: 2).map(\.version) == [3, 2])
            #expect(try await f.log.events(of: "fitness-alice", from: 0, direction: .backward).isEmpty)
            #expect(try await f.log.events(of: "fitness-bob", direction: .backward).map(\.position) == [4])
        }
    }

    @Test("the log reads from a position, through a position, with a limit and filters", arguments: Backend.allCases)
    func wholeLog(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await seed(f.log)
            #expect(try await f.log.events().map(\.position) == [1, 2, 3, 4, 5, 6])
            #expect(try await f.log.events(from: 3).map(\.position) == [3, 4, 5, 6])
            #expect(try await f.log.events(from: 2, through: 4).map(\.position) == [2, 3, 4])
            #expect(try await f.log.events(from: 2, limit: 2).map(\.position) == [2, 3])
            #expect(try await f.log.events(from: 7).isEmpty)
            #expect(try await f.log.events(from: 0, limit: 1).map(\.position) == [1])
            #expect(try await f.log.events(filter: EventFilter(category: "fitness-")).map(\.position) == [1, 2, 4, 5])
            #expect(try await f.log.events(filter: EventFilter(types: ["GoalSet", "Said"])).map(\.position) == [1, 3, 4, 6])
            #expect(try await f.log.events(filter: EventFilter(category: "fitness-", types: ["GoalSet"])).map(\.position) == [1, 4])
            #expect(try await f.log.events(filter: EventFilter(stream: "chat-main")).map(\.position) == [3, 6])
            #expect(try await f.log.events(from: 2, limit: 2, filter: EventFilter(category: "fitness-")).map(\.position) == [2, 4])
        }
    }

    @Test("a category is the part of the stream name before the first '-', matched exactly; a prefix is a prefix", arguments: Backend.allCases)
    func categories(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            for stream in ["todo-home", "todo-homework", "todo", "todos-x", "todo-a-b", "-lead"] {
                _ = try await f.log.append(to: stream, events: [event("T")])
            }
            func streams(_ filter: EventFilter) async throws -> [String] { try await f.log.events(filter: filter).map(\.stream) }
            #expect(try await streams(EventFilter(category: "todo")) == ["todo-home", "todo-homework", "todo", "todo-a-b"])
            #expect(try await streams(EventFilter(category: "todo-")) == ["todo-home", "todo-homework", "todo", "todo-a-b"])
            #expect(try await streams(EventFilter(category: "todo-home")).isEmpty)
            #expect(try await streams(EventFilter(category: "")) == ["-lead"])
            #expect(try await streams(EventFilter(streamPrefix: "todo-home")) == ["todo-home", "todo-homework"])
            #expect(try await streams(EventFilter(streamPrefix: "todo")) == ["todo-home", "todo-homework", "todo", "todos-x", "todo-a-b"])
            #expect(EventFilter.category(of: "todo-a-b") == "todo" && EventFilter.category(of: "todo") == "todo")
            #expect(EventFilter(category: "orders-") == EventFilter(category: "orders"))
        }
    }

    @Test("the filter used on records agrees with the public matches(_:)", arguments: Backend.allCases)
    func filterAgreesWithMatches(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await seed(f.log)
            let all = try await f.log.events()
            let filters = [
                EventFilter(), EventFilter(stream: "fitness-bob"), EventFilter(category: "chat"),
                EventFilter(category: "fitness-a", types: ["Walked"]), EventFilter(types: []), EventFilter(category: "fitness"),
                EventFilter(streamPrefix: "fitness-b"), EventFilter(category: "fit"), EventFilter(streamPrefix: "chat-", types: ["Said"]),
            ]
            for filter in filters {
                #expect(try await f.log.events(filter: filter) == all.filter(filter.matches))
            }
        }
    }

    @Test("head, versions and statistics describe the log", arguments: Backend.allCases)
    func headAndStatistics(_ backend: Backend) async throws {
        try await withLog(backend) { empty in
            let emptyStats = try await empty.log.statistics()
            #expect(emptyStats.eventCount == 0 && emptyStats.streamCount == 0)
            #expect(emptyStats.headPosition == 0 && emptyStats.firstPosition == 0)
            #expect(try await empty.log.headPosition() == 0)
        }
        try await withLog(backend) { f in
            try await seed(f.log)
            let stats = try await f.log.statistics()
            #expect(stats.eventCount == 6)
            #expect(stats.streamCount == 3)
            #expect(stats.firstPosition == 1)
            #expect(stats.headPosition == 6)
            #expect(stats.fileSize > 0)
            #expect(try await f.log.streamVersion("chat-main") == 2)
        }
    }

    @Test("every start, direction and limit reads the versions it should (across LMDB's index chunks and pending ones)", arguments: Backend.allCases)
    func allStreamReads(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // 41 events in "s", interleaved with another stream so positions and versions differ
            for n in 1...41 {
                _ = try await f.log.append([
                    StreamAppend(stream: "s", events: [event("E", #"{"v":\#(n)}"#)]), StreamAppend(stream: "other", events: [event("O")]),
                ])
            }
            let all = try await f.log.events(filter: EventFilter(stream: "s"))
            #expect(all.map(\.version) == Array(1...41))
            for start in [UInt64(1), 2, 15, 16, 17, 18, 32, 33, 40, 41, 42] {
                for limit in [1, 3, 16, 17, 100] {
                    let forward = try await f.log.events(of: "s", from: start, limit: limit)
                    #expect(forward == Array(all.filter { $0.version >= start }.prefix(limit)), "forward from \(start), limit \(limit)")
                    let backward = try await f.log.events(of: "s", from: start, direction: .backward, limit: limit)
                    #expect(backward == Array(all.filter { $0.version <= start }.reversed().prefix(limit)), "backward from \(start), limit \(limit)")
                }
            }
        }
    }
}
