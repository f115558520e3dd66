@testable import Projections
import Apps
import EventStore
import EventStoreTesting
import Foundation
import Testing
import TestSupport

@Suite("Processors, on every backend")
struct ProcessorConformanceTests {
    /// The positions each "MailDue" reacts to, in log order.
    static func mails(_ log: any EventLog) async throws -> [Int] {
        try await log.events(filter: EventFilter(types: ["MailDue"])).map { event in
            let object = try JSONSerialization.jsonObject(with: event.data) as? [String: Int]
            return object?["for"] ?? -1
        }
    }

    @Test("a processor that failed before committing resumes after the last committed event, with no reaction twice", arguments: Backend.allCases)
    func resumesExactlyOnce(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given six orders and a processor that crashes on the fourth, in batches of two
            for n in 1...6 { _ = try await f.log.append(to: "order-\(n)", events: [event("OrderPlaced")]) }
            let runner = ProcessorRunner(store: f.log, batchSize: 2)
            let crashing = Mailer(failing: 4)
            let error = await #expect(throws: ProjectionError.self) { try await runner.catchUp(crashing) }
            // Then it stopped at the fourth, with the third's reaction committed and its tracking position there
            #expect(error?.code == .stopped && error?.position == 4)
            #expect(try await Self.mails(f.log) == [1, 2, 3])
            #expect(try await f.log.trackingPosition(of: "mailer") == 3)
            // When it runs again, repaired
            let repaired = Mailer()
            let reached = try await runner.catchUp(repaired)
            // Then it handled only the events after the last commit, each once
            #expect(repaired.reactions.count == 3)
            #expect(try await Self.mails(f.log) == [1, 2, 3, 4, 5, 6])
            #expect(reached == 6)
            #expect(try await f.log.trackingPosition(of: "mailer") == 6)
            // And a third run finds nothing to do (its own reactions are not orders)
            #expect(try await runner.catchUp(Mailer()) == 6)
            #expect(try await Self.mails(f.log) == [1, 2, 3, 4, 5, 6])
        }
    }

    @Test("instances of one processor racing each other react to every event exactly once", arguments: Backend.allCases)
    func racingInstances(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given 40 orders
            for n in 1...40 { _ = try await f.log.append(to: "order-\(n)", events: [event("OrderPlaced")]) }
            // When four instances in different batch sizes run at once
            let log = f.log
            try await withThrowingTaskGroup(of: Void.self) { group in
                for batch in [1, 3, 7, 40] {
                    group.addTask { try await ProcessorRunner(store: log, batchSize: batch).catchUp(Mailer()) }
                }
                try await group.waitForAll()
            }
            // Then every order has exactly one reaction
            #expect(try await Self.mails(f.log).sorted() == Array(1...40))
            #expect(try await f.log.trackingPosition(of: "mailer") == 40)
        }
    }

    @Test("instances on two handles of one PostgreSQL store react to every event exactly once", arguments: [Backend.postgres])
    func racingHandles(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given 40 orders and a second handle on the store (another process, as far as the server can tell)
            for n in 1...40 { _ = try await f.log.append(to: "order-\(n)", events: [event("OrderPlaced")]) }
            let other = try await f.openAnother()
            return try await other.closingAfter {
                // When an instance runs on each handle at once
                let log = f.log
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await ProcessorRunner(store: log, batchSize: 3).catchUp(Mailer()) }
                    group.addTask { try await ProcessorRunner(store: other, batchSize: 5).catchUp(Mailer()) }
                    try await group.waitForAll()
                }
                // Then every order has exactly one reaction
                #expect(try await Self.mails(f.log).sorted() == Array(1...40))
                #expect(try await other.trackingPosition(of: "mailer") == 40)
            }
        }
    }

    @Test("the live runner runs processors as commits arrive", arguments: Backend.allCases)
    func liveProcessors(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType()])
            try await withDaemon(runner, processors: [Mailer()]) {
                // When two orders are placed with the daemon going (the first one's mail may come
                // before the second order or after it: their positions say where each landed)
                let first = try await f.log.append(to: "order-1", events: [event("OrderPlaced")]).positions[0]
                let second = try await f.log.append(to: "order-2", events: [event("OrderPlaced")]).positions[0]
                // Then the processor reacts to both
                try await withTimeout(.seconds(10), "the live processor to react to both orders") {
                    while try await f.log.trackingPosition(of: "mailer") < second { try await Task.sleep(for: .milliseconds(5)) }
                }
                #expect(try await Self.mails(f.log) == [first, second].map(Int.init))
                // And the projection counts the orders and the mails
                try await withTimeout(.seconds(10), "the live projection to count the orders and the mails") {
                    while try await runner.statuses()[0].checkpoint < 4 { try await Task.sleep(for: .milliseconds(5)) }
                }
                let counted = try await runner.query("count-by-type")
                #expect(counted == ["types": ["MailDue": 2, "OrderPlaced": 2], "total": 4], "\(counted)")
            }
        }
    }
}

@Suite("Reading one's own writes, on every backend")
struct ReadYourWritesConformanceTests {
    @Test("a query with a minimum position waits for an append made after it started", arguments: Backend.allCases)
    func waitsForALaterAppend(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a runner and a query waiting for position 2 of a store holding one event
            _ = try await f.log.append(to: "s", events: [event("A")])
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType()])
            let waiting = Task { try await runner.query("count-by-type", minPosition: 2, timeout: .seconds(30)) }
            // When the append arrives
            _ = try await f.log.append(to: "s", events: [event("B")])
            // Then the query answers with it
            #expect(try await waiting.value == ["types": ["A": 1, "B": 1], "total": 2])
        }
    }

    @Test("an esctl append in another process is waited for", arguments: Backend.allCases)
    func waitsForAnotherProcess(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a runner waiting for position 1 of an empty store
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType()])
            let waiting = Task { try await runner.waitUntilApplied("count-by-type", position: 1, timeout: .seconds(60)) }
            // When another process appends
            let child = try await ProcessRunner.esctl(["append", "elsewhere", "Happened"], db: f.db)
            #expect(child.status == 0, "\(child)")
            // Then the wait ends with it applied
            #expect(try await waiting.value == 1)
        }
    }

    @Test("a wait that runs out of time says where the projection and the head are", arguments: Backend.allCases)
    func timesOut(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given one event and a runner whose waits run on a test clock
            _ = try await f.log.append(to: "s", events: [event("A")])
            let clock = TestClock()
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType()], clock: clock)
            // (caught up first, so that where it stands does not depend on how far the wait's own
            // catch-up got before the clock moved)
            try await runner.catchUp()
            // When a wait for position 5 has slept its 5 s
            let waiting = Task { try await runner.waitUntilApplied("count-by-type", position: 5, timeout: .seconds(5)) }
            try await clock.waitForSleepers(1)
            clock.advance(by: .seconds(5))
            // Then it times out, saying where the projection and the head are
            let error = await #expect(throws: ProjectionError.self) { try await waiting.value }
            #expect(error?.code == .timedOut)
            #expect(error?.message == "The projection 'count-by-type' did not reach position 5 within 5 s (it is at 1, the head is 1).")
        }
    }
}
