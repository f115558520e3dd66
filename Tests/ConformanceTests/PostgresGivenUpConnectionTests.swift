import EventStoreCore
@testable import EventStorePostgres
import EventStoreTesting
import Foundation
import Logging
import PostgresTestSupport
import Testing

/// A statement that got no answer in time has its connection closed (`PoolSwitch.answered`).
/// The close fails the statement before it has finished; a caller that went on at that moment
/// was lent the connection still closing, and its append failed with `clientClosedConnection`
/// (a full suite's `silentStatement` test, about one cold run in four; 18 appends of 60 in a
/// loop). The call now answers only once the close finished and the pool knows of it.
@Suite("PostgreSQL: a connection given up is closed before its call answers")
struct PostgresGivenUpConnectionTests {
    @Test("a statement that fails once its connection starts closing is answered only after the close ended")
    func answeredAfterTheClose() async throws {
        let clock = TestClock()
        let log = AwaitableState<[String]>([])
        let closeMayEnd = AwaitableState(false)
        // Given a statement that fails as soon as its connection starts closing, and a close that
        // ends only when the test lets it
        let call = Task { () -> String in
            let answer: String
            do {
                _ = try await PoolSwitch.answered(
                    within: .seconds(30), clock: clock, logger: Logger(label: "test"), metadata: [:],
                    givingUp: {
                        log.update { $0.append("closing") }
                        try? await closeMayEnd.wait(.seconds(10), "the test to let the close end") { $0 }
                        log.update { $0.append("closed") }
                    },
                    {
                        try await log.wait(.seconds(10), "the close to begin") { $0.contains("closing") }
                        log.update { $0.append("failed") }
                        throw ConnectionClosed()
                    })
                answer = "answered"
            } catch {
                answer = "\(type(of: error))"
            }
            log.update { $0.append("returned") }
            return answer
        }
        // When its patience runs out, and the statement has failed
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(30))
        try await log.wait(.seconds(10), "the statement to fail once the close began") { $0.contains("failed") }
        // (a call that answers too soon has the time to do so here)
        for _ in 0..<200 { await Task.yield() }
        closeMayEnd.update { $0 = true }
        // Then the call fails with the statement's own failure, once the close has ended
        let answer = try await withTimeout(.seconds(10), "the call to answer") { await call.value }
        #expect(answer == "ConnectionClosed")
        #expect(log.withValue { $0 } == ["closing", "failed", "closed", "returned"])
    }

    @Test("a statement answered before its patience ran out has its connection left alone")
    func answeredInTime() async throws {
        let clock = TestClock()
        let closes = AwaitableState(0)
        // Given a statement that answers at once
        let answer = try await PoolSwitch.answered(
            within: .seconds(30), clock: clock, logger: Logger(label: "test"), metadata: [:],
            givingUp: { closes.update { $0 += 1 } }, { 42 })
        // When its patience would have run out
        clock.advance(by: .seconds(31))
        for _ in 0..<200 { await Task.yield() }
        // Then it answered, and nothing was closed
        #expect(answer == 42)
        #expect(closes.withValue { $0 } == 0)
    }

    @Test("a held connection is closed when given up, even one lent after the giving up, and never once released; its release waits for the close")
    func heldConnection() async throws {
        let closes = AwaitableState<[String]>([])
        let closeMayEnd = AwaitableState(false)
        let closer: @Sendable (String) async -> Void = { connection in
            closes.update { $0.append("closing \(connection)") }
            try? await closeMayEnd.wait(.seconds(10), "the test to let the close of \(connection) end") { $0 }
            closes.update { $0.append("closed \(connection)") }
        }
        // Given a call that holds a connection and is given up
        let holding = HeldConnection<String>(closer: closer)
        holding.hold("a")
        let givingUp = Task { await holding.close() }
        try await closes.wait(.seconds(10), "the close of a to begin") { $0 == ["closing a"] }
        // When the call ends its hold while the close runs
        let released = Task { await holding.release(); closes.update { $0.append("released a") } }
        for _ in 0..<200 { await Task.yield() }
        closeMayEnd.update { $0 = true }
        await givingUp.value
        await released.value
        // Then the connection went back only once its close had ended
        #expect(closes.withValue { $0 } == ["closing a", "closed a", "released a"])

        // Given a call given up while it waited for its connection
        let waiting = HeldConnection<String>(closer: closer)
        await waiting.close()
        #expect(closes.withValue { $0 }.count == 3, "nothing to close yet")
        // When the connection is lent after all, then released
        waiting.hold("b")
        await waiting.release()
        // Then it was closed as it was held, and released after
        #expect(closes.withValue { $0 }.suffix(2) == ["closing b", "closed b"])

        // Given a call that released its connection, when the timer gives it up late
        let done = HeldConnection<String>(closer: closer)
        done.hold("c")
        await done.release()
        await done.close()
        // Then the connection, perhaps lent to another call by now, is left alone
        #expect(!closes.withValue { $0 }.contains("closing c"))
    }

    @Test("on a store, a statement given up twenty times in a row leaves the next append its own working connection each time")
    func appendsAfterGivingUp() async throws {
        let database = try await ThrowawayDatabase.create()
        do {
            let store = try await PostgresEventStore(location: try PostgresLocation(url: database.url))
            var failures: [String] = []
            for n in 1...20 {
                // When a statement gets no answer within its patience
                await #expect(throws: (any Error).self) {
                    try await store.pool.rows("SELECT pg_sleep(60)", logger: store.configuration.logger, answeredWithin: .milliseconds(30))
                }
                // Then the append right after it is written
                do {
                    _ = try await store.append([StreamAppend(stream: "s-\(n)", events: [NewEvent(type: "Placed", data: Data("{}".utf8))])])
                } catch {
                    failures.append("append \(n): \(error)")
                }
            }
            #expect(failures == [])
            #expect(try await store.headPosition() == UInt64(20 - failures.count))
            await store.close()
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
    }
}
