@testable import Projections
import Apps
import EventStore
import Foundation
import Synchronization
import Testing
import TestSupport

/// Reacts to each "OrderPlaced" with a "MailDue" in the order's mail stream; fails on the
/// event at `failing` (a crash between handling and committing, as far as the store can tell).
struct Mailer: Processor {
    let name = "mailer"
    let eventTypes: Set<String>? = ["OrderPlaced"]
    var failing: UInt64? = nil
    let reactions = Counter()

    struct Crash: Error {}

    func react(to event: RecordedEvent) throws -> [StreamAppend] {
        reactions.add()
        if event.position == failing { throw Crash() }
        return [StreamAppend(stream: "mail-\(event.stream)", events: [NewEvent(type: "MailDue", data: Data(#"{"for":\#(event.position)}"#.utf8))])]
    }
}

final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

@Suite("Processors")
struct ProcessorTests {
    /// The positions each "MailDue" reacts to, in log order.
    static func mails(_ store: EventStore) throws -> [Int] {
        try store.read(limit: .max, filter: EventFilter(types: ["MailDue"])).map { event in
            let object = try JSONSerialization.jsonObject(with: event.data) as? [String: Int]
            return object?["for"] ?? -1
        }
    }

    @Test("a processor that failed before committing resumes after the last committed event, with no reaction twice")
    func resumesExactlyOnce() async throws {
        // Given six orders and a processor that crashes on the fourth, in batches of two
        let f = try ProjectionFixture()
        for n in 1...6 { _ = try await f.store.append(to: "order-\(n)", events: [event("OrderPlaced")]) }
        let runner = ProcessorRunner(store: f.store, batchSize: 2)
        let crashing = Mailer(failing: 4)
        let error = await #expect(throws: ProjectionError.self) { try await runner.catchUp(crashing) }
        // Then it stopped at the fourth, with the third's reaction committed and its tracking position there
        #expect(error?.code == .stopped && error?.position == 4)
        #expect(try Self.mails(f.store) == [1, 2, 3])
        #expect(try await f.store.trackingPosition(of: "mailer") == 3)
        // When it runs again, repaired
        let repaired = Mailer()
        let reached = try await runner.catchUp(repaired)
        // Then it handled only the events after the last commit, each once
        #expect(repaired.reactions.count == 3)
        #expect(try Self.mails(f.store) == [1, 2, 3, 4, 5, 6])
        #expect(reached == 6)
        #expect(try await f.store.trackingPosition(of: "mailer") == 6)
        // And a third run finds nothing to do (its own reactions are not orders)
        #expect(try await runner.catchUp(Mailer()) == 6)
        #expect(try Self.mails(f.store) == [1, 2, 3, 4, 5, 6])
    }

    @Test("instances of one processor racing each other react to every event exactly once")
    func racingInstances() async throws {
        let f = try ProjectionFixture()
        for n in 1...40 { _ = try await f.store.append(to: "order-\(n)", events: [event("OrderPlaced")]) }
        let store = f.store
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in [1, 3, 7, 40] {
                group.addTask { try await ProcessorRunner(store: store, batchSize: batch).catchUp(Mailer()) }
            }
            try await group.waitForAll()
        }
        #expect(try Self.mails(f.store) .sorted() == Array(1...40))
        #expect(try await f.store.trackingPosition(of: "mailer") == 40)
    }

    @Test("the live runner runs processors as commits arrive")
    func liveProcessors() async throws {
        let f = try ProjectionFixture()
        let runner = try await ProjectionRunner(store: f.store, projections: [EventCountByType()])
        try await withDaemon(runner, processors: [Mailer()]) {
            _ = try await f.store.append(to: "order-1", events: [event("OrderPlaced")])
            _ = try await f.store.append(to: "order-2", events: [event("OrderPlaced")])
            try await withTimeout(.seconds(10), "the live processor to react to both orders") {
                while try await f.store.trackingPosition(of: "mailer") < 2 { try await Task.sleep(for: .milliseconds(5)) }
            }
            #expect(try Self.mails(f.store) == [1, 2])
            try await withTimeout(.seconds(10), "the live projection to count the orders and the mails") {
                while try runner.statuses()[0].checkpoint < 4 { try await Task.sleep(for: .milliseconds(5)) }
            }
            let counted = try await runner.query("count-by-type")
            #expect(counted == ["types": ["MailDue": 2, "OrderPlaced": 2], "total": 4], "\(counted)")
        }
    }
}

@Suite("Reading one's own writes")
struct ReadYourWritesTests {
    @Test("a query with a minimum position waits for an append made after it started")
    func waitsForALaterAppend() async throws {
        // Given a runner and a query waiting for position 2 of a store holding one event
        let f = try ProjectionFixture()
        _ = try await f.store.append(to: "s", events: [event("A")])
        let runner = try await ProjectionRunner(store: f.store, projections: [EventCountByType()])
        let waiting = Task { try await runner.query("count-by-type", minPosition: 2, timeout: .seconds(30)) }
        // When the append arrives
        _ = try await f.store.append(to: "s", events: [event("B")])
        // Then the query answers with it
        #expect(try await waiting.value == ["types": ["A": 1, "B": 1], "total": 2])
    }

    @Test("an esctl append in another process is waited for")
    func waitsForAnotherProcess() async throws {
        let f = try ProjectionFixture()
        let runner = try await ProjectionRunner(store: f.store, projections: [EventCountByType()])
        let waiting = Task { try await runner.waitUntilApplied("count-by-type", position: 1, timeout: .seconds(60)) }
        let child = try await ProcessRunner.esctl(["append", "elsewhere", "Happened"], db: f.path)
        #expect(child.status == 0, "\(child)")
        #expect(try await waiting.value == 1)
    }

    @Test("a wait that runs out of time says where the projection and the head are")
    func timesOut() async throws {
        let f = try ProjectionFixture()
        _ = try await f.store.append(to: "s", events: [event("A")])
        let runner = try await ProjectionRunner(store: f.store, projections: [EventCountByType()])
        let error = await #expect(throws: ProjectionError.self) {
            try await runner.waitUntilApplied("count-by-type", position: 5, timeout: .milliseconds(50))
        }
        #expect(error?.code == .timedOut)
        #expect(error?.message == "The projection 'count-by-type' did not reach position 5 within 0.05 s (it is at 1, the head is 1).")
    }
}
