@testable import EventStoreCore
@testable import EventStoreLMDB
import EventStoreTesting
import Foundation
import Testing

/// Tags, queries and conditional appends (dynamic consistency boundaries), the same on every backend.
@Suite("Conditional appends: tags, queries, and appends that fail when a matching event was recorded since")
struct ConditionalAppendConformanceTests {
    func tagged(_ type: String, _ tags: [String], id: UUID? = nil) -> NewEvent {
        NewEvent(id: id, type: type, data: Data("{}".utf8), tags: tags)
    }

    /// 1 A[x], 2 B[x,y], 3 A[y], 4 C[], 5 B[z], spread over two streams.
    func given(_ f: LogFixture) async throws {
        _ = try await f.log.append(to: "s-1", events: [tagged("A", ["x"]), tagged("B", ["x", "y"])])
        _ = try await f.log.append(to: "s-2", events: [tagged("A", ["y"]), tagged("C", [])])
        _ = try await f.log.append(to: "s-1", events: [tagged("B", ["z"])])
    }

    /// (query, after, the positions it matches).
    static let truthTable: [(EventQuery, UInt64?, [UInt64])] = [
        (EventQuery(types: ["A"]), nil, [1, 3]),
        (EventQuery(tags: ["x"]), nil, [1, 2]),
        (EventQuery(tags: ["x", "y"]), nil, [2]),
        (EventQuery(tags: ["y", "x"]), nil, [2]),
        (EventQuery(types: ["A"], tags: ["y"]), nil, [3]),
        (EventQuery(types: ["A", "B"], tags: ["x"]), nil, [1, 2]),
        (EventQuery([QueryItem(types: ["C"]), QueryItem(tags: ["z"])]), nil, [4, 5]),
        (EventQuery([QueryItem(tags: ["x"]), QueryItem(tags: ["y"])]), nil, [1, 2, 3]),
        (EventQuery(types: ["D"]), nil, []),
        (EventQuery(tags: ["w"]), nil, []),
        (EventQuery(types: ["A"], tags: ["z"]), nil, []),
        (EventQuery.all, nil, [1, 2, 3, 4, 5]),
        (EventQuery(tags: ["y"]), 2, [3]),
        (EventQuery(tags: ["y"]), 3, []),
        (EventQuery(types: ["B"]), 2, [5]),
        (EventQuery(types: ["B"]), 1, [2, 5]),
        (EventQuery.all, 5, []),
        (EventQuery.all, .max, []),
        (EventQuery(types: ["B", "A"]), nil, [1, 2, 3, 5]),
        (EventQuery(types: ["A", "A"]), nil, [1, 3]),
        (EventQuery([QueryItem(types: ["A"]), QueryItem(types: ["A"])]), nil, [1, 3]),
    ]

    @Test("a query matches by types (any of them) and tags (all of them), any item may match, after is exclusive", arguments: Backend.allCases)
    func truthTableReads(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given five events with types and tags
            try await given(f)
            for (query, after, expected) in Self.truthTable {
                // When the query is read after the position
                let result = try await f.log.read(query, after: after ?? 0, limit: 100)
                // Then exactly the expected events come back, in order, with their tags, and the head
                #expect(result.events.map(\.position) == expected, "\(query) after \(after.map(String.init) ?? "none")")
                #expect(result.head == 5)
                // And read in place, the same events and head
                var inPlace: [RecordedEvent] = []
                let head = try await f.log.forEachEvent(matching: query, after: after ?? 0, limit: 100) { inPlace.append($0.recordedEvent()) }
                #expect(inPlace == result.events, "in place: \(query) after \(after.map(String.init) ?? "none")")
                #expect(head == 5)
            }
            let read = try await f.log.read(EventQuery(tags: ["x"]), after: 0, limit: 1)
            #expect(read.events.map(\.tags) == [["x"]], "a limit of 1 gives the first match only, its tags as given")
            var firstInPlace: [UInt64] = []
            _ = try await f.log.forEachEvent(matching: .all, after: 1, limit: 2) { firstInPlace.append($0.position) }
            #expect(firstInPlace == [2, 3], "in place, every event after 1, two of them")
            // And a limit cuts the merge of several types' positions, both ways
            for (after, expected) in [(UInt64(0), [UInt64(1)]), (1, [2]), (3, [5])] {
                let query = EventQuery(types: ["B", "A"])
                #expect(try await f.log.read(query, after: after, limit: 1).events.map(\.position) == expected, "after \(after)")
                var one: [UInt64] = []
                _ = try await f.log.forEachEvent(matching: query, after: after, limit: 1) { one.append($0.position) }
                #expect(one == expected, "in place, after \(after)")
            }
            #expect(try await f.log.event(at: 2)?.tags == ["x", "y"])
        }
    }

    @Test("a conditional append fails exactly when the query matches after its position, naming the first match and its item", arguments: Backend.allCases)
    func truthTableConditions(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given five events with types and tags
            try await given(f)
            // (Every case but the one that matches nothing after the head: the probes come after it.)
            for (query, after, expected) in Self.truthTable where !(query == .all && expected.isEmpty) {
                let head = try await f.log.headPosition()
                // When an event is appended on the condition that nothing matches after the position
                do {
                    _ = try await f.log.append(
                        [StreamAppend(stream: "probe", events: [tagged("P", ["probe"])])],
                        condition: AppendCondition(failIfEventsMatch: query, after: after))
                    // Then it is written only when nothing matches
                    #expect(expected.isEmpty, "\(query) after \(after.map(String.init) ?? "none") matches \(expected) yet the append went through")
                    #expect(try await f.log.headPosition() == head + 1)
                } catch let error as EventStoreError {
                    // Or it fails, names the first match, and writes nothing
                    #expect(error.code == .conditionFailed)
                    #expect(error.position == expected.first, "\(query): \(error.message)")
                    #expect(try await f.log.headPosition() == head)
                }
            }
            // And the item named is the first one the event matches
            let twoItems = AppendCondition(failIfEventsMatch: EventQuery([QueryItem(tags: ["z"]), QueryItem(types: ["C"])]))
            let error = await #expect(throws: EventStoreError.self) {
                _ = try await f.log.append([StreamAppend(stream: "probe", events: [tagged("P", [])])], condition: twoItems)
            }
            #expect(error?.position == 4 && error?.conditionItem == 1)
            #expect(error?.message.contains("position 4 matches item 2 of its query") == true, "\(error?.message ?? "")")
        }
    }

    @Test("without after, a condition checks the whole log: a uniqueness rule", arguments: Backend.allCases)
    func uniqueness(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let unique = AppendCondition(failIfEventsMatch: EventQuery(types: ["SiteAdded"], tags: ["site:15"]))
            // Given site 15 added once on that condition
            let first = try await f.log.append([StreamAppend(stream: "camp", events: [tagged("SiteAdded", ["site:15"])])], condition: unique)
            #expect(first[0].positions == [1])
            _ = try await f.log.append(to: "other", events: [tagged("Noise", ["site:15"])])
            // When it is added again on the same condition, then it is refused, naming position 1
            let error = await #expect(throws: EventStoreError.self) {
                _ = try await f.log.append([StreamAppend(stream: "camp", events: [tagged("SiteAdded", ["site:15"])])], condition: unique)
            }
            #expect(error?.code == .conditionFailed && error?.position == 1 && error?.conditionItem == 0)
            // And another site is not
            let other = AppendCondition(failIfEventsMatch: EventQuery(types: ["SiteAdded"], tags: ["site:16"]))
            let second = try await f.log.append([StreamAppend(stream: "camp", events: [tagged("SiteAdded", ["site:16"])])], condition: other)
            #expect(second[0].positions == [3])
        }
    }

    @Test("a retry with the same ids returns the original positions, though the condition now fails", arguments: Backend.allCases)
    func idempotentRetry(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a conditional append that committed
            let condition = AppendCondition(failIfEventsMatch: EventQuery(tags: ["site:15"]), after: 0)
            let ids = [UUID(), UUID()]
            let events = [tagged("Reserved", ["site:15", "camper:C1"], id: ids[0]), tagged("Noted", ["site:15"], id: ids[1])]
            let first = try await f.log.append([StreamAppend(stream: "camp", events: events)], condition: condition)
            // When it is retried as it was
            let retry = try await f.log.append([StreamAppend(stream: "camp", events: events)], condition: condition)
            // Then the original positions come back and nothing is written
            #expect(retry[0].alreadyRecorded && retry[0].positions == first[0].positions)
            #expect(try await f.log.headPosition() == 2)
            // And the same ids with other tags are other content
            let changed = [tagged("Reserved", ["site:16"], id: ids[0]), tagged("Noted", ["site:15"], id: ids[1])]
            let error = await #expect(throws: EventStoreError.self) {
                _ = try await f.log.append([StreamAppend(stream: "camp", events: changed)], condition: condition)
            }
            #expect(error?.code == .idempotencyConflict)
        }
    }

    @Test("16 racing writers decide from the same head and append on the same condition: exactly one commits", arguments: Backend.allCases)
    func racers(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given an empty site, read by every racer
            let query = EventQuery(types: ["Reserved"], tags: ["site:15"])
            let head = try await f.log.read(query, after: 0, limit: 10).head
            let log = f.log
            // When 16 writers each reserve it on the condition that nothing matched since
            let outcomes = try await withThrowingTaskGroup(of: EventStoreError.Code?.self) { group in
                for racer in 0..<16 {
                    group.addTask {
                        do {
                            _ = try await log.append(
                                [StreamAppend(stream: "camp-\(racer)", events: [NewEvent(type: "Reserved", tags: ["site:15", "racer:\(racer)"])])],
                                condition: AppendCondition(failIfEventsMatch: query, after: head))
                            return nil
                        } catch let error as EventStoreError {
                            return error.code
                        }
                    }
                }
                return try await group.reduce(into: [EventStoreError.Code?]()) { $0.append($1) }
            }
            // Then exactly one commits and the others fail on the condition
            #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
            #expect(outcomes.filter { $0 == .conditionFailed }.count == 15)
            #expect(try await f.log.read(query, after: 0, limit: 100).events.count == 1)
        }
    }

    @Test("deleted events leave the indexes: queries and conditions no longer see them", arguments: Backend.allCases)
    func deletionLeavesIndexes(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given tagged events in a stream, deleted
            _ = try await f.log.append(to: "gone", events: [tagged("A", ["x"]), tagged("B", ["x"])])
            _ = try await f.log.append(to: "kept", events: [tagged("A", ["y"])])
            _ = try await f.log.deleteStream("gone", expectedVersion: .any, hard: false)
            // When the log is queried, then only the kept event matches
            #expect(try await f.log.read(EventQuery(types: ["A"]), after: 0, limit: 10).events.map(\.position) == [3])
            #expect(try await f.log.read(EventQuery(tags: ["x"]), after: 0, limit: 10).events.isEmpty)
            // And a condition on them passes
            _ = try await f.log.append(
                [StreamAppend(stream: "new", events: [tagged("A", ["x"])])], condition: AppendCondition(failIfEventsMatch: EventQuery(tags: ["x"])))
            let report = try await f.log.verify()
            #expect(report.isClean, "\(report.problems)")
        }
    }

    @Test("bad tags and queries are refused and write nothing", arguments: Backend.allCases)
    func refusals(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let cases: [([NewEvent], AppendCondition?, String)] = [
                ([tagged("A", [""])], nil, "The tag name is empty"),
                ([tagged("A", [String(repeating: "t", count: 201)])], nil, "201 bytes long"),
                ([tagged("A", (0..<33).map { "t\($0)" })], nil, "33 tags; give at most 32"),
                ([tagged("A", ["x", "x"])], nil, "the same tag twice"),
                ([tagged("A", ["x", "y", "z", "y"])], nil, "the same tag twice"),
                ([tagged("A", ["bad\u{7}"])], nil, "control character"),
                ([tagged("A", [])], AppendCondition(failIfEventsMatch: EventQuery([])), "no items"),
                ([tagged("A", [])], AppendCondition(failIfEventsMatch: EventQuery(tags: [""])), "The tag name is empty"),
            ]
            for (events, condition, message) in cases {
                let error = await #expect(throws: EventStoreError.self) {
                    if let condition {
                        _ = try await f.log.append([StreamAppend(stream: "s", events: events)], condition: condition)
                    } else {
                        _ = try await f.log.append(to: "s", events: events)
                    }
                }
                #expect(error?.code == .invalidInput && error?.message.contains(message) == true, "\(error?.message ?? "no error")")
            }
            let head = try await f.log.headPosition()
            #expect(head == 0, "nothing was written")
            await #expect(throws: EventStoreError.self) { _ = try await f.log.read(EventQuery([]), after: 0, limit: 1) }
        }
    }

    @Test("tags survive a reopen and verify stays clean", arguments: Backend.allCases)
    func reopen(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await given(f)
            try await f.reopen()
            #expect(try await f.log.read(EventQuery(tags: ["y"]), after: 0, limit: 10).events.map(\.tags) == [["x", "y"], ["y"]])
            let report = try await f.log.verify()
            #expect(report.isClean, "\(report.problems)")
        }
    }

    @Test("types and tags in two Unicode forms are two names on every query path", arguments: Backend.allCases)
    func unicodeForms(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given 1 é[a] and 2 é′[a] (a type in each form), 3 T[é, é′], 4 T[é], 5 and 6 T[é′]
            let composed = "caf\u{E9}"
            let decomposed = "cafe\u{301}"
            _ = try await f.log.append(to: "u", events: [
                tagged(composed, ["a"]), tagged(decomposed, ["a"]), tagged("T", [composed, decomposed]), tagged("T", [composed]),
                tagged("T", [decomposed]), tagged("T", [decomposed]),
            ])
            let cases: [(EventQuery, [UInt64])] = [
                (EventQuery(types: [composed, decomposed]), [1, 2]),
                (EventQuery(types: [decomposed, composed]), [1, 2]),
                (EventQuery(types: [composed]), [1]),
                (EventQuery(types: [decomposed, composed], tags: ["a"]), [1, 2]),
                (EventQuery(tags: [composed, decomposed]), [3]),
                (EventQuery(tags: [decomposed, composed]), [3]),
                (EventQuery(tags: [composed]), [3, 4]),
                (EventQuery(tags: [decomposed]), [3, 5, 6]),
            ]
            for (query, expected) in cases {
                // When each query is read, forwards, in place and for its last match
                let read = try await f.log.read(query, after: 0, limit: 10).events.map(\.position)
                var inPlace: [UInt64] = []
                _ = try await f.log.forEachEvent(matching: query, after: 0, limit: 10) { inPlace.append($0.position) }
                let last = try await f.log.lastEvent(matching: query, through: .max)?.position
                // Then each finds exactly the events of its own forms
                #expect(read == expected, "read \(query)")
                #expect(inPlace == expected, "in place \(query)")
                #expect(last == expected.last, "last \(query)")
            }
        }
    }

    @Test("a condition after the head is refused; names compare byte by byte; an item of a rare type and a common tag walks the type", arguments: Backend.allCases)
    func edges(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given 40 events tagged busy, one of them Rare, and two tags equal but for their Unicode form
            _ = try await f.log.append(to: "s", events: (0..<40).map { tagged($0 == 20 ? "Rare" : "Noise", ["busy"]) })
            let composed = "caf\u{E9}"
            let decomposed = "cafe\u{301}"
            _ = try await f.log.append(to: "t", events: [tagged("Cafe", [composed]), tagged("Cafe", [decomposed])])
            // When an item asks for the rare type among the busy tag, then it finds position 21 alone
            #expect(try await f.log.read(EventQuery(types: ["Rare"], tags: ["busy"]), after: 0, limit: 10).events.map(\.position) == [21])
            #expect(try await f.log.read(EventQuery(types: ["Rare"], tags: ["busy"]), after: 21, limit: 10).events.isEmpty)
            #expect(try await f.log.lastEvent(matching: EventQuery(types: ["Noise"], tags: ["busy"]), through: .max)?.position == 40)
            // And each Unicode form finds its own event only
            #expect(try await f.log.read(EventQuery(tags: [composed]), after: 0, limit: 10).events.map(\.position) == [41])
            #expect(try await f.log.read(EventQuery(tags: [decomposed]), after: 0, limit: 10).events.map(\.position) == [42])
            // And one event may carry both forms (they are two tags)
            _ = try await f.log.append(to: "t", events: [tagged("Cafe", [composed, decomposed])])
            // And a condition after a position beyond the head is refused, nothing written
            let error = await #expect(throws: EventStoreError.self) {
                _ = try await f.log.append(
                    [StreamAppend(stream: "u", events: [tagged("A", [])])], condition: AppendCondition(failIfEventsMatch: .all, after: 1_000))
            }
            #expect(error?.code == .invalidInput && error?.message.contains("beyond the head 43") == true, "\(error?.message ?? "")")
            let head = try await f.log.headPosition()
            #expect(head == 43)
        }
    }
}
