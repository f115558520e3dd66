import EventStoreCore
import EventStoreTesting
@testable import EventStorePostgres
import Foundation
import Logging
import PostgresTestSupport
import TestSupport
import Testing

/// A primary and its synchronous standby in one store URL (the failover pair
/// `scripts/with-postgres.sh` starts beside its main cluster): the server each
/// `target_session_attrs` picks, reads waiting for the standby, then a failover (the primary killed with SIGKILL, the standby
/// promoted) under a store that goes on appending on the new primary, nothing acknowledged lost.
/// The pair is used up by the failover, so everything runs in one test, in order.
@Suite("PostgreSQL: a primary and its standby in one URL, and a failover")
struct PostgresFailoverTests {
    static func environment(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw ThrowawayDatabaseError(
                "\(name) is not set, so the failover tests have no primary and standby: run them through `make test` or `scripts/with-postgres.sh swift test`.")
        }
        return value
    }

    /// Runs the pair's control script with `command` (kill-primary, promote).
    static func control(_ command: String) async throws {
        let script = URL(fileURLWithPath: try environment("ESTEST_POSTGRES_FAILOVER_CONTROL"))
        let output = try await ProcessRunner.run(script, [command], timeout: .seconds(90))
        #expect(output.status == 0, "failover-control \(command): \(output)")
    }

    static func event(_ n: Int) -> NewEvent {
        NewEvent(id: UUID(uuidString: String(format: "00000000-0000-7000-8000-%012d", n)), type: "Placed", data: Data(#"{"n":\#(n)}"#.utf8))
    }

    @Test("an append made again after its commit (its answer lost) is answered as written once, its store-generated ids included, and writes nothing twice",
        arguments: [false, true])
    func retriedAfterCommit(givenIDs: Bool) async throws {
        try await withLog(.postgres) { f in
            let store = try #require(f.log as? PostgresEventStore)
            // Given an append of two streams, one expecting version 1, whose call committed
            _ = try await store.append(to: "a", events: [NewEvent(type: "Before", data: Data("{}".utf8))])
            let events = (1...2).map { n in
                NewEvent(id: givenIDs ? Self.event(n).id : nil, type: "Placed", data: Data(#"{"n":\#(n)}"#.utf8))
            }
            let request = store.request(
                [StreamAppend(stream: "a", events: [events[0]], expectedVersion: .exact(1)), StreamAppend(stream: "b", events: [events[1]])],
                tracking: nil)
            let call = AppendCall([request], now: 1_700_000_000_000_000)
            let first = call.outcomes(try await store.pool.rows(call.query, logger: store.configuration.logger).map { try $0.decode(AppendCall.Row.self) })
            // When the same call is made again, as after a failover
            let retried = call.retried()
            let second = retried.outcomes(
                try await store.pool.rows(retried.query, logger: store.configuration.logger).map { try $0.decode(AppendCall.Row.self) })
            // Then both answer the same positions and versions, the retry as written when the
            // store generated the ids (only this call could have written them), as recorded when
            // the caller gave them
            let written = try first[0].get()
            let again = try second[0].get()
            #expect(written.map(\.positions) == [[2], [3]])
            #expect(written.map(\.version) == [2, 1])
            #expect(written.allSatisfy { !$0.alreadyRecorded })
            #expect(again.map(\.positions) == written.map(\.positions))
            #expect(again.map(\.version) == written.map(\.version))
            #expect(again.map(\.ids) == written.map(\.ids))
            #expect(again.allSatisfy { $0.alreadyRecorded == givenIDs })
            // And the log holds each event once
            #expect(try await store.headPosition() == 3)
            #expect(try await store.readStream("b", from: nil, direction: .forward, limit: 10).map(\.id) == written[1].ids)
        }
    }

    @Test("each target_session_attrs picks its server; reads hand out nothing the synchronous standby lacks; a store goes on appending on the promoted standby, losing nothing acknowledged, its subscriber seeing every event once, in order")
    func failover() async throws {
        let url = try Self.environment("ESTEST_POSTGRES_FAILOVER_URL")
        let location = try PostgresLocation(url: url)
        let quiet = Logger(label: "test")
        try #require(location.endpoints.count == 2)

        // Given the pair, the primary first: each attribute's server
        func picked(_ attributes: PostgresLocation.TargetSessionAttributes?, reversed: Bool = false, writing: Bool = true) async throws -> Int {
            var given = location
            if reversed { given.endpoints.reverse() }
            given.targetSessionAttributes = attributes
            return try await ServerLocator.locate(given, writing: writing, logger: quiet)
        }
        #expect(try await picked(nil) == 0)
        #expect(try await picked(nil, reversed: true) == 1, "a writer skips the standby listed first")
        #expect(try await picked(nil, reversed: true, writing: false) == 0, "a reader takes the first that answers")
        #expect(try await picked(.any, reversed: true) == 0)
        #expect(try await picked(.primary, reversed: true) == 1)
        #expect(try await picked(.standby) == 1)
        #expect(try await picked(.readOnly) == 1)
        #expect(try await picked(.preferStandby) == 1)
        #expect(try await picked(.readWrite) == 0)
        // And a writer given only the standby is refused, told what the server is
        var standbyOnly = location.narrowed(to: 1)
        standbyOnly.targetSessionAttributes = .readWrite
        let refused = await #expect(throws: EventStoreError.self) {
            try await PostgresEventStore(location: standbyOnly).close()
        }
        #expect(refused?.code == .storeUnavailable)
        #expect(refused?.message.contains("is a standby") == true, "\(refused?.message ?? "")")

        // Given a store on both servers, with 20 events appended one by one, each acknowledged
        let logs = LogCapture()
        var configuration = StoreConfiguration()
        configuration.logger = logs.logger
        let store = try await PostgresEventStore(location: location, configuration: configuration)
        for n in 1...20 {
            _ = try await store.append(to: "orders", events: [Self.event(n)], expectedVersion: n == 1 ? .noStream : .exact(UInt64(n - 1)))
        }
        #expect(store.pool.serverInUse == location.endpoints[0])
        // And a subscriber from the start that has seen them all and waits
        let collector = EventCollector(store.subscription(from: .start))
        #expect(try await collector.take(20, within: .seconds(30)).map(\.version) == Array(1...20))

        // Given the standby's WAL receiver stopped, so that the primary's commits wait for it
        try await Self.control("pause-standby")
        // And an append whose wait for the standby was cancelled (as an administrator may):
        // PostgreSQL answers its commit, made on the primary alone, and shows its event there, as
        // it does when the primary dies in that wait
        let unreplicated = Task { try await store.append(to: "orders", events: [Self.event(21)], expectedVersion: .exact(20)) }
        // (picked by its statement, the append function's call: any other commit of the pair
        // waits there too meanwhile, and cancelling it would leave the append waiting)
        let (waiting, othersWaiting) = try await withTimeout(.seconds(30), "the append to wait for the paused standby") {
            while true {
                let rows = try await store.pool.rows(
                    "SELECT pid, query LIKE '%FROM eventstore.append(%' FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND pid <> pg_backend_pid()",
                    logger: quiet)
                let backends = try rows.map { try $0.decode((Int32, Bool).self) }
                if let append = backends.first(where: \.1) { return (append.0, backends.count - 1) }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        _ = try await store.pool.rows("SELECT pg_cancel_backend(\(waiting))", logger: quiet)
        let cancelled = try await withTimeout(.seconds(30), "the append whose wait was cancelled to be answered") { try await unreplicated.value }
        #expect(cancelled.version == 21)
        // When a reader reads it, and the subscriber is woken by it
        let answered = Flag()
        let reading = Task {
            defer { answered.set() }
            return try await store.read(from: 21, limit: 10)
        }
        try await Task.sleep(for: .seconds(2))
        // Then neither hands it out while the standby lacks it
        #expect(
            !answered.isSet,
            "a read answered while the synchronous standby lacked event 21 (\(othersWaiting) other backends waited for it beside the append's; the pool on \(store.pool.serverInUse))")
        #expect(collector.received.count == 20, "the subscriber was handed an event the synchronous standby did not hold")
        // And both do once the standby has it
        try await Self.control("resume-standby")
        let read = try await withTimeout(.seconds(30), "the read to answer once the standby had the event") { try await reading.value }
        #expect(read.map(\.id) == [Self.event(21).id])
        #expect(try await collector.take(1, within: .seconds(30)).map(\.id) == [Self.event(21).id])

        // When the primary dies (SIGKILL), an append is made, and then the standby is promoted
        try await Self.control("kill-primary")
        let killed = ContinuousClock.now
        let appending = Task { try await store.append(to: "orders", events: [Self.event(22)], expectedVersion: .exact(21)) }
        try await Self.control("promote")

        // Then that append is acknowledged once, the caller seeing no failure: made on the dying
        // primary while its standby still took its WAL, or made again by the store, by its ids,
        // once the promoted standby took writes
        let result = try await withTimeout(.seconds(120), "the append made during the failover to be acknowledged") {
            try await appending.value
        }
        #expect(result.version == 22)
        print("failover: the append made after the SIGKILL was acknowledged after \(ContinuousClock.now - killed)")
        // And the subscriber, its listening connection lost with the primary, sees the new
        // event and one more, after the 21, in order, each once, the next append having found
        // the promoted standby
        _ = try await store.append(to: "orders", events: [Self.event(23)], expectedVersion: .exact(22))
        #expect(store.pool.serverInUse == location.endpoints[1])
        let after = try await collector.take(2, within: .seconds(60))
        #expect(after.map(\.version) == [22, 23])
        #expect(after.map(\.id) == [Self.event(22).id, Self.event(23).id])
        try await collector.expectNothingMore(through: 23)
        // And every acknowledged event is there once, in order, with the new ones after them
        let events = try await store.readStream("orders", from: nil, direction: .forward, limit: 100)
        #expect(events.map(\.version) == Array(1...23))
        #expect(events.map(\.id) == (1...23).map { Self.event($0).id })
        // And the switch was logged, naming both servers
        let switches = logs.entries.withLock { $0.filter { $0.message == "switched to another PostgreSQL server" } }
        #expect(switches.count == 1, "\(logs.messages)")
        #expect(switches.first?.metadata["to"] == "\(location.endpoints[1])")
        await store.close()
    }
}
