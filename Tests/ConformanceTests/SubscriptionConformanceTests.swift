@testable import EventStoreCore
@testable import EventStoreLMDB
import EventStoreTesting
import Foundation
import Testing

@Suite("Subscriptions, on every backend")
struct SubscriptionConformanceTests {
    @Test("catch-up turns into live with no gap and no duplicate while appends run concurrently", arguments: Backend.allCases)
    func catchUpRacesAppends(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a log that already holds some events
            let log = f.log
            _ = try await log.append(to: "s-0", events: (0..<300).map { _ in event("Old") })
            // When a subscriber starts from the start while a writer keeps appending
            let collector = EventCollector(log.subscription(from: .start))
            let writer = Task {
                for batch in 1...120 {
                    _ = try await log.append(to: "s-\(batch % 7)", events: (0..<(batch % 5 + 1)).map { _ in event("New") })
                }
            }
            try await writer.value
            let head = try await log.headPosition()
            // Then it sees exactly positions 1...head, once each, in order
            let events = try await collector.take(Int(head), within: .seconds(30))
            #expect(events.map(\.position) == Array(1...head))
            try await collector.expectNothingMore(through: head)
        }
    }

    @Test("filters pass only one stream, a category or a set of types, in catch-up and live", arguments: Backend.allCases)
    func filters(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let log = f.log
            _ = try await log.append(to: "fitness-alice", events: [event("GoalSet"), event("Started")])
            _ = try await log.append(to: "chat-main", events: [event("Said")])
            let byStream = EventCollector(log.subscription(from: .start, filter: EventFilter(stream: "fitness-alice")).withProgress)
            let byCategory = EventCollector(log.subscription(from: .start, filter: EventFilter(category: "fitness-")).withProgress)
            let byTypes = EventCollector(log.subscription(from: .start, filter: EventFilter(types: ["Said", "GoalSet"])).withProgress)
            _ = try await log.append(to: "fitness-bob", events: [event("GoalSet")])
            _ = try await log.append(to: "chat-main", events: [event("Said")])
            _ = try await log.append(to: "fitness-alice", events: [event("Walked")])

            #expect(try await byStream.take(3).map(\.position) == [1, 2, 6])
            #expect(try await byCategory.take(4).map(\.position) == [1, 2, 4, 6])
            #expect(try await byTypes.take(3).map(\.position) == [1, 3, 4])
            #expect(try await byTypes.take(1).map(\.position) == [5])
            for collector in [byStream, byCategory, byTypes] {
                try await collector.expectNothingMore(through: 6)
            }
        }
    }

    @Test("from the end sees only events committed after subscribing; from a position starts there", arguments: Backend.allCases)
    func startPositions(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let log = f.log
            _ = try await log.append(to: "s", events: (0..<5).map { _ in event("Old") })
            let fromEnd = EventCollector(log.subscription(from: .end).withProgress)
            let fromThree = EventCollector(log.subscription(from: .position(3)).withProgress)
            let fromZero = EventCollector(log.subscription(from: .position(0)).withProgress)
            _ = try await log.append(to: "s", events: [event("New"), event("New")])
            #expect(try await fromEnd.take(2).map(\.position) == [6, 7])
            #expect(try await fromThree.take(5).map(\.position) == [3, 4, 5, 6, 7])
            #expect(try await fromZero.take(7).map(\.position) == Array(1...7))
            for collector in [fromEnd, fromThree, fromZero] {
                try await collector.expectNothingMore(through: 7)
            }
        }
    }

    @Test("an event posted twice with one id is delivered once (an inverted expectation done right)", arguments: Backend.allCases)
    func duplicateIsNotDelivered(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let log = f.log
            let collector = EventCollector(log.subscription(from: .start).withProgress)
            let id = SequentialIDs.id(500)
            _ = try await log.append(to: "s", events: [event("Once", id: id)])
            _ = try await log.append(to: "s", events: [event("Once", id: id)])
            _ = try await log.append(to: "marker", events: [event("Marker")])
            #expect(try await collector.take(1).map(\.type) == ["Once"])
            #expect(try await collector.take(1).map(\.type) == ["Marker"])
            try await collector.expectNothingMore(through: 2)
        }
    }

    @Test("100 subscribers at once each receive every event", arguments: Backend.allCases)
    func hundredSubscribers(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let log = f.log
            let collectors = (0..<100).map { n in
                EventCollector(log.subscription(from: n % 2 == 0 ? .start : .end))
            }
            for batch in 0..<10 {
                _ = try await log.append(to: "s-\(batch)", events: [event("E"), event("E")])
            }
            for collector in collectors {
                #expect(try await collector.take(20, within: .seconds(30)).map(\.position) == Array(1...20))
            }
        }
    }

    @Test("cancelling the consuming task ends the sequence promptly and leaves no waiter behind", arguments: Backend.allCases)
    func cancellationEndsTheSequence(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let log = f.log
            let signal = try headSignal(of: log)
            _ = try await log.append(to: "s", events: [event("E")])
            let (reached, reachedSignal) = AsyncStream<Void>.makeStream()
            let consumer = Task { () -> Int in
                var count = 0
                for try await _ in log.subscription(from: .start) {
                    count += 1
                    reachedSignal.yield()
                }
                return count
            }
            try await withTimeout(.seconds(10), "the first event") {
                var iterator = reached.makeAsyncIterator()
                _ = await iterator.next()
            }
            try await withTimeout(.seconds(10), "the subscriber to wait for the head") {
                while signal.waiterCount == 0 { await Task.yield() }
            }
            consumer.cancel()
            let count = try await withTimeout(.seconds(10), "the cancelled subscription to end") { try await consumer.value }
            #expect(count == 1)
            #expect(signal.waiterCount == 0)
        }
    }

    @Test("closing the store ends a waiting subscription with the closed error", arguments: Backend.allCases)
    func closingEndsSubscriptions(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let log = f.log
            let signal = try headSignal(of: log)
            let collector = EventCollector(log.subscription(from: .start).withProgress)
            try await collector.expectNothingMore(through: 0)
            let consumer = Task {
                for try await _ in log.subscription(from: .start) {}
            }
            try await withTimeout(.seconds(10), "two subscribers to wait for the head") {
                while signal.waiterCount < 2 { await Task.yield() }
            }
            await log.close()
            let error = await #expect(throws: EventStoreError.self) {
                try await withTimeout(.seconds(10), "the subscription to fail") { try await consumer.value }
            }
            #expect(error?.code == .closed)
            let failure = await #expect(throws: AwaitFailure.self) { try await collector.take(1) }
            #expect(failure?.description.contains("closed") == true)
            // A subscription made after closing fails at once.
            let late = await #expect(throws: EventStoreError.self) {
                var iterator = log.subscription(from: .start).makeAsyncIterator()
                _ = try await iterator.next()
            }
            #expect(late?.code == .closed)
        }
    }

    @Test("a consumer that stops pulling holds no event buffered while 200,000 are appended, then reads them in order, a page at most in hand", arguments: Backend.allCases)
    func slowConsumerCostsNoMemory(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a subscriber that has taken one event and then stops pulling
            let log = f.log
            _ = try await log.append(to: "s", events: [event("First")])
            var iterator = log.subscription(from: .start).makeAsyncIterator()
            #expect(try await iterator.next()?.position == 1)
            // When 200,000 events are appended while it does nothing
            for batch in 0..<20 {
                _ = try await log.append(to: "s-\(batch)", events: Array(repeating: event("Bulk", #"{"n":1}"#), count: 10_000))
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
    }

    @Test("a page holds no more stored bytes than its byte limit, one event at least, and the next page goes on with no gap", arguments: Backend.allCases)
    func pagesBoundedInBytes(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given six events of about 4 kB, one of 50 kB, then three of 4 kB
            let log = f.log
            let small = event("Small", "\"" + String(repeating: "a", count: 4_000) + "\"")
            let large = event("Large", "\"" + String(repeating: "b", count: 50_000) + "\"")
            _ = try await log.append(to: "s", events: Array(repeating: small, count: 6) + [large] + Array(repeating: small, count: 3))
            let source = try #require(log as? any SubscriptionSource, "every backend is a subscription source")
            // When the log is read in pages of at most 10,000 bytes
            var pages: [[UInt64]] = []
            var next: UInt64 = 1
            while next <= 10, pages.count < 20 {
                let page = try await source.readPage(from: next, limit: 256, byteLimit: 10_000, scanLimit: 4096, filter: .all)
                pages.append(page.events.map(\.position))
                next = page.scannedThrough + 1
            }
            // Then two small events fit a page (a third would pass the limit), the large one is
            // a page alone, and together the pages hold every position once, in order
            #expect(pages == [[1, 2], [3, 4], [5, 6], [7], [8, 9], [10]])
            // And a subscription delivers the same events a page at a time
            let collector = EventCollector(log.subscription(from: .start))
            #expect(try await collector.take(10, within: .seconds(30)).map(\.position) == Array(1...10))
        }
    }

    @Test("a stream read bounded in bytes stops before the event that would pass the bound, forward and backward, one event at least", arguments: Backend.allCases)
    func streamReadsBoundedInBytes(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a stream of three events of about 4 kB, one of 50 kB, then two of 4 kB
            let log = f.log
            let small = event("Small", "\"" + String(repeating: "a", count: 4_000) + "\"")
            let large = event("Large", "\"" + String(repeating: "b", count: 50_000) + "\"")
            _ = try await log.append(to: "s", events: Array(repeating: small, count: 3) + [large] + Array(repeating: small, count: 2))
            let pages = try #require(log as? any StreamPageReads, "every backend reads stream pages bounded in bytes")
            // When it is read in pages of at most 10,000 bytes, each after the last version read
            func read(_ direction: ReadDirection) async throws -> [[UInt64]] {
                var result: [[UInt64]] = []
                var from: UInt64? = nil
                while result.count < 10 {
                    let page = try await pages.readStream("s", from: from, direction: direction, limit: 256, byteLimit: 10_000)
                    guard let last = page.last else { break }
                    result.append(page.map(\.version))
                    if direction == .backward && last.version == 1 { break }
                    from = direction == .forward ? last.version + 1 : last.version - 1
                }
                return result
            }
            // Then two small events fit a page, the large one is a page alone, in either direction
            #expect(try await read(.forward) == [[1, 2], [3], [4], [5, 6]])
            #expect(try await read(.backward) == [[6, 5], [4], [3, 2], [1]])
            // And the event limit still holds
            #expect(try await pages.readStream("s", from: nil, direction: .forward, limit: 1, byteLimit: 10_000).map(\.version) == [1])
        }
    }
}
