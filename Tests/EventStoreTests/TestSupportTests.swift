import EventStore
import Foundation
import Synchronization
import Testing
import TestSupport

/// The helpers every asynchronous test relies on must themselves fail when they should.
@Suite("Test support")
struct TestSupportTests {
    @Test("withTimeout returns the operation's result when it finishes first")
    func resultWins() async throws {
        let value = try await withTimeout(.seconds(10), "a quick value") { 42 }
        #expect(value == 42)
    }

    @Test("withTimeout throws a timeout naming what was awaited, and cancels the operation")
    func timeoutWins() async throws {
        let clock = TestClock()
        let operationCancelled = Atomic<Bool>(false)
        let task = Task {
            try await withTimeout(.seconds(5), "the answer", clock: clock) {
                do {
                    try await Task.sleep(for: .seconds(3600))
                } catch {
                    operationCancelled.store(true, ordering: .relaxed)
                    throw error
                }
            }
        }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: TimeoutError.self) { try await task.value }
        #expect(error?.description == "Timed out after 5.0 seconds waiting for the answer.")
        try await withTimeout(.seconds(10), "the losing operation to see its cancellation") {
            while !operationCancelled.load(ordering: .relaxed) { await Task.yield() }
        }
    }

    @Test("withTimeout returns at once even when the losing operation ignores cancellation")
    func uncooperativeLoser() async throws {
        let clock = TestClock()
        let release = DispatchSemaphore(value: 0)
        let task = Task {
            try await withTimeout(.seconds(1), "a stuck operation", clock: clock) {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().async {
                        release.wait()
                        continuation.resume()
                    }
                }
            }
        }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await #expect(throws: TimeoutError.self) { try await task.value }
        release.signal()
    }

    @Test("cancelling the caller of withTimeout cancels the operation and throws CancellationError")
    func callerCancellation() async throws {
        let started = Atomic<Bool>(false)
        let task = Task {
            try await withTimeout(.seconds(3600), "something slow") {
                started.store(true, ordering: .relaxed)
                try await Task.sleep(for: .seconds(3600))
            }
        }
        try await withTimeout(.seconds(10), "the operation to start") {
            while !started.load(ordering: .relaxed) { await Task.yield() }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("awaiting more events than arrive fails, saying what did arrive")
    func takeReportsWhatArrived() async throws {
        let f = try StoreFixture()
        let collector = EventCollector(f.store.subscribe(from: .start))
        _ = try await f.store.append(to: "s", events: [event("Came")])
        // (the one event received before the short wait begins: a subscription's task starved
        // for 300 ms would otherwise make the failure say nothing arrived)
        try await waitUntil("the appended event to reach the collector") { collector.received.count == 1 }
        let failure = await #expect(throws: AwaitFailure.self) { try await collector.take(2, within: .milliseconds(300)) }
        #expect(failure?.description.contains("2 more event(s)") == true)
        #expect(failure?.description.contains("#1 s@1 Came") == true)
    }

    @Test("expectNothingMore fails when an unexpected event came before the position, and passes otherwise")
    func expectNothingMoreDetects() async throws {
        let f = try StoreFixture()
        let collector = EventCollector(f.store.subscribe(from: .start).withProgress)
        _ = try await f.store.append(to: "s", events: [event("Expected"), event("Surprise")])
        #expect(try await collector.take(1).map(\.type) == ["Expected"])
        let failure = await #expect(throws: AwaitFailure.self) { try await collector.expectNothingMore(through: 2) }
        #expect(failure?.description.contains("Surprise") == true)
        try await collector.expectNothingMore(through: 2, matching: { $0.type != "Surprise" })
    }

    @Test("take(firstMatching:) skips to the first match")
    func takeFirstMatching() async throws {
        let f = try StoreFixture()
        let collector = EventCollector(f.store.subscribe(from: .start))
        _ = try await f.store.append(to: "s", events: [event("A"), event("B"), event("C")])
        let found = try await collector.take(firstMatching: { $0.type == "B" })
        #expect(found.position == 2)
        #expect(try await collector.take(1).map(\.type) == ["C"])
    }

    @Test("the test clock wakes sleepers in deadline order when advanced, and not before")
    func testClock() async throws {
        final class Order: Sendable {
            let woken = Mutex<[Int]>([])
        }
        let clock = TestClock()
        let order = Order()
        let sleepers = (1...3).map { n in
            Task {
                try await clock.sleep(for: .seconds(n))
                order.woken.withLock { $0.append(n) }
            }
        }
        try await clock.waitForSleepers(3)
        clock.advance(by: .milliseconds(1500))
        try await withTimeout(.seconds(10), "the first sleeper") { try await sleepers[0].value }
        #expect(order.woken.withLock { $0 } == [1])
        #expect(clock.sleeperCount == 2)
        // (One sleeper woken per step: two woken by one advance run at once, in either order.)
        clock.advance(by: .seconds(1))
        try await withTimeout(.seconds(10), "the second sleeper") { try await sleepers[1].value }
        #expect(order.woken.withLock { $0 } == [1, 2])
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        try await withTimeout(.seconds(10), "the third sleeper") { try await sleepers[2].value }
        #expect(order.woken.withLock { $0 } == [1, 2, 3])
        #expect(clock.sleeperCount == 0)
    }
}
