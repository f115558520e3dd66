@testable import EventStore
import Foundation
import Testing
import TestSupport

@Suite("Subscriptions")
struct SubscriptionTests {
    @Test("catch-up turns into live with no gap and no duplicate while appends run concurrently")
    func catchUpRacesAppends() async throws {
        // Given a log that already holds some events
        let f = try StoreFixture()
        let store = f.store
        _ = try await store.append(to: "s-0", events: (0..<300).map { _ in event("Old") })
        // When a subscriber starts from the start while a writer keeps appending
        let collector = EventCollector(store.subscribe(from: .start))
        let writer = Task {
            for batch in 1...120 {
                _ = try await store.append(to: "s-\(batch % 7)", events: (0..<(batch % 5 + 1)).map { _ in event("New") })
            }
        }
        try await writer.value
        let head = try store.headPosition()
        // Then it sees exactly positions 1...head, once each, in order
        let events = try await collector.take(Int(head), within: .seconds(30))
        #expect(events.map(\.position) == Array(1...head))
        try await collector.expectNothingMore(through: head)
    }

    @Test("filters pass only one stream, a category or a set of types, in catch-up and live")
    func filters() async throws {
        let f = try StoreFixture()
        let store = f.store
        _ = try await store.append(to: "fitness-alice", events: [event("GoalSet"), event("Started")])
        _ = try await store.append(to: "chat-main", events: [event("Said")])
        let byStream = EventCollector(store.subscribe(from: .start, filter: EventFilter(stream: "fitness-alice")).withProgress)
        let byCategory = EventCollector(store.subscribe(from: .start, filter: EventFilter(category: "fitness-")).withProgress)
        let byTypes = EventCollector(store.subscribe(from: .start, filter: EventFilter(types: ["Said", "GoalSet"])).withProgress)
        _ = try await store.append(to: "fitness-bob", events: [event("GoalSet")])
        _ = try await store.append(to: "chat-main", events: [event("Said")])
        _ = try await store.append(to: "fitness-alice", events: [event("Walked")])

        #expect(try await byStream.take(3).map(\.position) == [1, 2, 6])
        #expect(try await byCategory.take(4).map(\.position) == [1, 2, 4, 6])
        #expect(try await byTypes.take(3).map(\.position) == [1, 3, 4])
        #expect(try await byTypes.take(1).map(\.position) == [5])
        for collector in [byStream, byCategory, byTypes] {
            try await collector.expectNothingMore(through: 6)
        }
    }

    @Test("from the end sees only events committed after subscribing; from a position starts there")
    func startPositions() async throws {
        let f = try StoreFixture()
        let store = f.store
        _ = try await store.append(to: "s", events: (0..<5).map { _ in event("Old") })
        let fromEnd = EventCollector(store.subscribe(from: .end).withProgress)
        let fromThree = EventCollector(store.subscribe(from: .position(3)).withProgress)
        let fromZero = EventCollector(store.subscribe(from: .position(0)).withProgress)
        _ = try await store.append(to: "s", events: [event("New"), event("New")])
        #expect(try await fromEnd.take(2).map(\.position) == [6, 7])
        #expect(try await fromThree.take(5).map(\.position) == [3, 4, 5, 6, 7])
        #expect(try await fromZero.take(7).map(\.position) == Array(1...7))
        for collector in [fromEnd, fromThree, fromZero] {
            try await collector.expectNothingMore(through: 7)
        }
    }

    @Test("an event posted twice with one id is delivered once (an inverted expectation done right)")
    func duplicateIsNotDelivered() async throws {
        let f = try StoreFixture()
        let store = f.store
        let collector = EventCollector(store.subscribe(from: .start).withProgress)
        let id = SequentialIDs.id(500)
        _ = try await store.append(to: "s", events: [event("Once", id: id)])
        _ = try await store.append(to: "s", events: [event("Once", id: id)])
        _ = try await store.append(to: "marker", events: [event("Marker")])
        #expect(try await collector.take(1).map(\.type) == ["Once"])
        #expect(try await collector.take(1).map(\.type) == ["Marker"])
        try await collector.expectNothingMore(through: 2)
    }

    @Test("100 subscribers at once each receive every event")
    func hundredSubscribers() async throws {
        let f = try StoreFixture()
        let store = f.store
        let collectors = (0..<100).map { n in
            EventCollector(store.subscribe(from: n % 2 == 0 ? .start : .end))
        }
        for batch in 0..<10 {
            _ = try await store.append(to: "s-\(batch)", events: [event("E"), event("E")])
        }
        for collector in collectors {
            #expect(try await collector.take(20, within: .seconds(30)).map(\.position) == Array(1...20))
        }
    }

    @Test("cancelling the consuming task ends the sequence promptly and leaves no waiter behind")
    func cancellationEndsTheSequence() async throws {
        let f = try StoreFixture()
        let store = f.store
        _ = try await store.append(to: "s", events: [event("E")])
        let (reached, signal) = AsyncStream<Void>.makeStream()
        let consumer = Task { () -> Int in
            var count = 0
            for try await _ in store.subscribe(from: .start) {
                count += 1
                signal.yield()
            }
            return count
        }
        try await withTimeout(.seconds(10), "the first event") {
            var iterator = reached.makeAsyncIterator()
            _ = await iterator.next()
        }
        try await withTimeout(.seconds(10), "the subscriber to wait for the head") {
            while store.headSignal.waiterCount == 0 { await Task.yield() }
        }
        consumer.cancel()
        let count = try await withTimeout(.seconds(10), "the cancelled subscription to end") { try await consumer.value }
        #expect(count == 1)
        #expect(store.headSignal.waiterCount == 0)
    }

    @Test("closing the store ends a waiting subscription with the closed error")
    func closingEndsSubscriptions() async throws {
        let f = try StoreFixture()
        let store = f.store
        let collector = EventCollector(store.subscribe(from: .start).withProgress)
        try await collector.expectNothingMore(through: 0)
        let consumer = Task {
            for try await _ in store.subscribe(from: .start) {}
        }
        try await withTimeout(.seconds(10), "two subscribers to wait for the head") {
            while store.headSignal.waiterCount < 2 { await Task.yield() }
        }
        store.close()
        let error = await #expect(throws: EventStoreError.self) {
            try await withTimeout(.seconds(10), "the subscription to fail") { try await consumer.value }
        }
        #expect(error?.code == .closed)
        let failure = await #expect(throws: AwaitFailure.self) { try await collector.take(1) }
        #expect(failure?.description.contains("closed") == true)
        // A subscription made after closing fails at once.
        let late = await #expect(throws: EventStoreError.self) {
            var iterator = store.subscribe(from: .start).makeAsyncIterator()
            _ = try await iterator.next()
        }
        #expect(late?.code == .closed)
    }

    @Test("a consumer that stops pulling holds no event buffered while 200,000 are appended, then reads them in order, a page at most in hand")
    func slowConsumerCostsNoMemory() async throws {
        // Given a subscriber that has taken one event and then stops pulling
        let f = try StoreFixture()
        let store = f.store
        _ = try await store.append(to: "s", events: [event("First")])
        var iterator = store.subscribe(from: .start).makeAsyncIterator()
        #expect(try await iterator.next()?.position == 1)
        // When 200,000 events are appended while it does nothing
        for batch in 0..<20 {
            _ = try await store.append(to: "s-\(batch)", events: Array(repeating: event("Bulk", #"{"n":1}"#), count: 10_000))
        }
        // Then it holds nothing buffered, and afterwards reads them all in order, one page at a time
        #expect(iterator.core.machine.bufferedCount == 0)
        var expected: UInt64 = 2
        var largestBuffer = 0
        while expected <= 200_001 {
            let next = try await iterator.next()
            #expect(next?.position == expected)
            if next?.position != expected { break }
            largestBuffer = max(largestBuffer, iterator.core.machine.bufferedCount)
            expected += 1
        }
        #expect(largestBuffer < SubscriptionCore.pageSize)
    }

    @Test("commits of another process are noticed by polling on the injected clock")
    func pollingOnATestClock() async throws {
        // Given a store here whose poller runs on a test clock, with a subscriber waiting
        let clock = TestClock()
        let directory = try TemporaryDirectory()
        let path = directory.appending("store")
        let store = try EventStore(
            path: path, configuration: Configuration(durability: .noSync, pollInterval: .seconds(1), pollClock: clock))
        defer { store.close() }
        let collector = EventCollector(store.subscribe(from: .end).withProgress)
        try await collector.expectNothingMore(through: 0)
        try await clock.waitForSleepers(1)
        // When another process appends
        let child = try await ProcessRunner.esctl(["append", "elsewhere", "Happened"], db: path)
        #expect(child.status == 0, "\(child)")
        // Then nothing arrives until the poll interval passes on the clock...
        #expect(collector.received.isEmpty)
        clock.advance(by: .seconds(1))
        // ...and then the event does
        #expect(try await collector.take(1).map(\.stream) == ["elsewhere"])
    }

    @Test("an esctl append in another process reaches a subscriber here")
    func crossProcess() async throws {
        let f = try StoreFixture()
        let collector = EventCollector(f.store.subscribe(from: .end).withProgress)
        try await collector.expectNothingMore(through: 0)
        let child = Task { try await ProcessRunner.esctl(["append", "orders-1", "OrderPlaced", "--data", #"{"total":12}"#], db: f.path) }
        let received = try await collector.take(1, within: .seconds(30))
        #expect(received.map(\.type) == ["OrderPlaced"])
        #expect(received.map { String(decoding: $0.data, as: UTF8.self) } == [#"{"total":12}"#])
        #expect(try await child.value.status == 0)
    }
}
