@testable import ConsumerGroups
import EventStoreCore
@testable import EventStorePostgres
import Foundation
import PostgresTestSupport
import Testing

/// Appends whose answer is lost after they committed (as when the primary fails between COMMIT
/// and its answer), made again by the store on a URL naming several servers: every kind of
/// append is answered once, as written or recorded, and nothing is written twice. The answers
/// are lost by the tests' fault (`PoolSwitch.losingAnswers`) on a URL that names the same
/// server twice, so that the store treats the lost answer as a failover's.
@Suite("PostgreSQL: appends made again after their answer was lost")
struct PostgresRetryTests {
    /// Runs `body` with a store on a database of its own, opened through a URL naming its server
    /// twice (or once, with `servers` 1).
    func withStore(servers: Int = 2, _ body: (PostgresEventStore) async throws -> Void) async throws {
        let database = try await ThrowawayDatabase.create()
        do {
            var location = try PostgresLocation(url: database.url)
            location.endpoints = Array(repeating: location.endpoints[0], count: servers)
            #expect(location.choosesAmongServers == (servers > 1))
            let store = try await PostgresEventStore(location: location)
            do {
                try await body(store)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }

    /// Runs `body` with the next `count` committed appends of `store` losing their answer.
    func losing<T>(_ count: Int, _ store: PostgresEventStore, _ body: () async throws -> T) async rethrows -> T {
        store.pool.losingAnswers.lose(count)
        defer { store.pool.losingAnswers.lose(0) }
        return try await body()
    }

    static func events(_ given: Bool, _ first: Int, _ count: Int) -> [NewEvent] {
        (first..<first + count).map { n in
            NewEvent(
                id: given ? UUID(uuidString: String(format: "00000000-0000-7000-8000-%012d", n)) : nil, type: "Placed",
                data: Data(#"{"n":\#(n)}"#.utf8))
        }
    }

    @Test("a grouped append with a tracking position, its answer lost: answered as written once, not as already processed", arguments: [false, true])
    func tracking(givenIDs: Bool) async throws {
        try await withStore { store in
            // Given two events to react to
            _ = try await store.append([StreamAppend(stream: "source", events: Self.events(false, 1, 2))])
            // When a processor's append with its tracking position commits and its answer is lost
            let results = try await losing(1, store) {
                try await store.append(
                    [StreamAppend(stream: "out", events: Self.events(givenIDs, 10, 2), expectedVersion: .noStream)],
                    tracking: TrackingPosition(name: "p", position: 2))
            }
            // Then the retry answers it as the lost try wrote it: recorded when the ids were the
            // caller's, written when they were the store's
            #expect(results.map(\.positions) == [[3, 4]])
            #expect(results.map(\.version) == [2])
            #expect(results.map(\.alreadyRecorded) == [givenIDs])
            // And the log holds the events once, with the tracking position recorded
            #expect(try await store.headPosition() == 4)
            #expect(try await store.readStream("out", from: nil, direction: .forward, limit: 10).map(\.id) == results[0].ids)
            #expect(try await store.trackingPosition(of: "p") == 2)
            // And a real repeat of the position (another instance) is still refused as already processed
            let repeated = await #expect(throws: EventStoreError.self) {
                try await store.append([StreamAppend(stream: "other", events: Self.events(false, 20, 1))], tracking: TrackingPosition(name: "p", position: 2))
            }
            #expect(repeated?.code == .alreadyProcessed)
        }
    }

    @Test("a conditional append, with and without a tracking position, its answer lost: answered once, not refused by its own events",
        arguments: [false, true], [false, true])
    func conditional(givenIDs: Bool, tracked: Bool) async throws {
        try await withStore { store in
            // Given a log of one event, read by a decision
            _ = try await store.append([StreamAppend(stream: "source", events: Self.events(false, 1, 1))])
            let condition = AppendCondition(failIfEventsMatch: EventQuery(types: ["Placed"]), after: 1)
            // When the conditional append commits and its answer is lost
            let appends = [StreamAppend(stream: "out", events: Self.events(givenIDs, 10, 1))]
            let results = try await losing(1, store) {
                tracked
                    ? try await store.append(appends, condition: condition, tracking: TrackingPosition(name: "p", position: 1))
                    : try await store.append(appends, condition: condition)
            }
            // Then the retry, whose condition its own event would fail, answers it as written once
            #expect(results.map(\.positions) == [[2]])
            #expect(results.map(\.alreadyRecorded) == [givenIDs])
            #expect(try await store.headPosition() == 2)
            #expect(try await store.trackingPosition(of: "p") == (tracked ? 1 : 0))
            // And another append on the same condition is refused: the fact exists now
            let refused = await #expect(throws: EventStoreError.self) {
                try await store.append([StreamAppend(stream: "out", events: Self.events(false, 20, 1))], condition: condition)
            }
            #expect(refused?.code == .conditionFailed)
        }
    }

    @Test("an append that also writes tables, its answer lost: its rows written once, its body not run again", arguments: [false, true])
    func alsoWriting(givenIDs: Bool) async throws {
        try await withStore { store in
            try await store.openTables(["side"])
            let runs = Counter()
            // When the append commits with its row and its answer is lost
            let results = try await losing(1, store) {
                try await store.append([StreamAppend(stream: "s", events: Self.events(givenIDs, 1, 1))]) { txn, results in
                    runs.add()
                    try await txn.put("side", Array("row".utf8), Array("run \(runs.count) \(results[0].positions)".utf8))
                }
            }
            // Then it is answered once; the body ran once, in the try that committed
            #expect(results.map(\.positions) == [[1]])
            #expect(runs.count == 1)
            #expect(try await store.readTables { txn in try await txn.get("side", Array("row".utf8)) } == Array("run 1 [1]".utf8))
            #expect(try await store.headPosition() == 1)
        }
    }

    @Test("a consumer group's acknowledgement that appends, its answer lost: settled once, its events written once, the member told it succeeded",
        arguments: [false, true])
    func settlement(givenIDs: Bool) async throws {
        try await withStore { store in
            let groups = ConsumerGroups(store: store)
            try await groups.create(GroupDefinition(name: "g", partitions: 1))
            _ = try await store.append([StreamAppend(stream: "orders-1", events: Self.events(false, 1, 2))])
            let member = try await groups.join("g", member: "m", pollInterval: .milliseconds(20))
            let inbox = Inbox(member)
            // Given the first event delivered
            let delivery = try await inbox.next("the first event")
            #expect(delivery.event.position == 1)
            // When its acknowledgement, which appends an event, commits and its answer is lost
            let results = try await losing(1, store) {
                try await delivery.acknowledge(appending: [StreamAppend(stream: "receipts-1", events: Self.events(givenIDs, 10, 1))])
            }
            // Then the member is told it succeeded, with the event's position
            #expect(results.map(\.positions) == [[3]])
            // And the group goes on with the second event, the first settled once
            let second = try await inbox.next("the second event, after the first was settled")
            #expect(second.event.position == 2)
            try await second.acknowledge()
            #expect(try await groups.status("g").checkpoint == 2)
            #expect(try await store.headPosition() == 3)
            #expect(try await store.readStream("receipts-1", from: nil, direction: .forward, limit: 10).count == 1)
            await member.leave()
        }
    }

    @Test("with one server, an append whose answer was lost is not made again: it fails with outcomeUnknown, the whole grouped call with it")
    func oneServer() async throws {
        try await withStore(servers: 1) { store in
            // When an append commits and its answer is lost, with one server in the URL
            let events = Self.events(true, 1, 1)
            let error = await #expect(throws: EventStoreError.self) {
                try await losing(1, store) { try await store.append([StreamAppend(stream: "s", events: events)]) }
            }
            // Then the caller learns the outcome is unknown (it was written), and the same ids
            // appended again are answered as recorded
            #expect(error?.code == .outcomeUnknown)
            #expect(error?.message.contains("with one server") == true)
            let again = try await store.append([StreamAppend(stream: "s", events: events)])
            #expect(again.map(\.alreadyRecorded) == [true])
            #expect(try await store.headPosition() == 1)
        }
    }

    @Test("a statement that must answer soon and does not has its connection closed: it fails as a lost connection, and the store goes on")
    func silentStatement() async throws {
        try await withStore(servers: 1) { store in
            // When a statement gets no answer within its patience (a server that fell silent)
            let started = ContinuousClock.now
            let error = await #expect(throws: (any Error).self) {
                try await store.pool.rows("SELECT pg_sleep(60)", logger: store.configuration.logger, answeredWithin: .milliseconds(500))
            }
            // Then it fails soon, as a connection lost under it, which appends take as an unknown outcome
            #expect(ContinuousClock.now - started < .seconds(30), "the statement was not cut short")
            #expect(error.map(PoolSwitch.lostUnderCall) == true, "\(String(describing: error))")
            // And the store goes on appending
            _ = try await store.append([StreamAppend(stream: "s", events: Self.events(false, 1, 1))])
            #expect(try await store.headPosition() == 1)
        }
    }

    @Test("answers lost more often than the retries: the whole call fails with outcomeUnknown, and the same ids appended again are answered as recorded")
    func outcomeUnknown() async throws {
        try await withStore { store in
            // When every try commits and loses its answer (one more than the retries)
            let events = Self.events(true, 1, 2)
            let error = await #expect(throws: EventStoreError.self) {
                try await losing(AppendRetry.retries + 1, store) {
                    try await store.append([StreamAppend(stream: "s", events: events, expectedVersion: .noStream)])
                }
            }
            // Then the caller learns the outcome is unknown, in a sentence that says what to do
            #expect(error?.code == .outcomeUnknown)
            #expect(error?.message.contains("append the same events again, with the same ids") == true)
            #expect(EventStoreError(.outcomeUnknown, "m").httpStatus == 503)
            // And appending the same events again answers them as recorded, written once
            let again = try await store.append([StreamAppend(stream: "s", events: events, expectedVersion: .noStream)])
            #expect(again.map(\.positions) == [[1, 2]])
            #expect(again.map(\.alreadyRecorded) == [true])
            #expect(try await store.headPosition() == 2)
        }
    }
}
