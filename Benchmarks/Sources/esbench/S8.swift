import Apps
import AsyncHTTPClient
import EventStore
import Foundation
import HTTPServer
import Logging
import NIOCore
import Projections
import Synchronization

extension Bench {
    /// S8: `subscribers` Server-Sent Events clients of `esctl serve`'s server over loopback, and
    /// one writer appending single events at a steady pace; the delay from the moment an append
    /// is called to the moment each subscriber has read the event (commit, wake-up, write and
    /// read included), as p50 and p99 over every delivery.
    func s8() async throws {
        let subscribers = options.s8Subscribers
        let events = options.s8Events
        let storePath = directory("s8-store")
        let store = try EventStore(
            path: storePath, configuration: StoreConfiguration(durability: .noSync, initialMapSize: 1 << 30, upcasters: AppCatalog.upcasters))
        let runner = try await ProjectionRunner(store: store, projections: [])
        let server = try Server(store: store, runner: runner, apps: AppCatalog.modules, options: ServerOptions(port: 0), logger: .init(label: "s8") { _ in SwiftLogNoOpLogHandler() })
        let (listening, announce) = AsyncStream<Int>.makeStream()
        let serving = Task { try await server.run { _, port in announce.yield(port) } }
        var ports = listening.makeAsyncIterator()
        guard let port = await ports.next() else { throw S8Error("the server never listened") }

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: subscribers + 8)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let sent = SentTimes(count: events)
        let ready = Counter()
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<subscribers {
                group.addTask {
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/subscribe?limit=\(events)")
                    request.headers.add(name: "Accept", value: "text/event-stream")
                    let response = try await client.execute(request, timeout: .minutes(10))
                    var delays: [Double] = []
                    delays.reserveCapacity(events)
                    var pending = ""
                    var isReady = false
                    for try await chunk in response.body {
                        let now = ContinuousClock.now
                        pending += String(buffer: chunk)
                        while let end = pending.range(of: "\n\n") {
                            let block = pending[..<end.lowerBound]
                            pending = String(pending[end.upperBound...])
                            if block.hasPrefix("event: caughtUp"), !isReady {
                                isReady = true
                                ready.increment()
                            } else if block.hasPrefix("id: "), let position = Int(block.dropFirst(4).prefix { $0 != "\n" }),
                                let at = sent.time(of: position)
                            {
                                delays.append(Self.seconds(at.duration(to: now)))
                            }
                        }
                    }
                    return delays
                }
            }
            await ready.wait(for: subscribers)
            // A steady pace well under the server's capacity: this measures delay, not throughput.
            for position in 1...events {
                sent.record(position, ContinuousClock.now)
                _ = try await store.append(to: "s8-\(position % 16)", events: [NewEvent(type: "Tick", data: Data("{}".utf8))])
                try await Task.sleep(for: .milliseconds(2))
            }
            var all: [Double] = []
            for try await delays in group { all += delays }
            return all
        }
        try await client.shutdown()
        serving.cancel()
        _ = try? await serving.value
        await store.close()
        cleanUp(storePath)

        let sorted = latencies.sorted()
        let p50 = Measure.percentile(sorted, 0.5) * 1000
        let p99 = Measure.percentile(sorted, 0.99) * 1000
        let note = "\(subscribers) SSE subscribers over loopback, \(events) single-event appends 2 ms apart, \(sorted.count) deliveries"
        report.add(Figure(scenario: "S8", contender: "eventstore", metric: "commit-to-delivery p50", value: p50, unit: "ms", note: note))
        report.add(Figure(scenario: "S8", contender: "eventstore", metric: "commit-to-delivery p99", value: p99, unit: "ms"))
        report.judge("S8", "commit-to-delivery p99 ≤ 20 ms", measured: String(format: "%.2f ms", p99), p99 <= 20 && sorted.count == subscribers * events)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

struct S8Error: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// When each position's append was called (the writer records, the subscribers read).
final class SentTimes: Sendable {
    private let times: Mutex<[ContinuousClock.Instant?]>

    init(count: Int) { times = Mutex(Array(repeating: nil, count: count + 1)) }

    func record(_ position: Int, _ instant: ContinuousClock.Instant) { times.withLock { $0[position] = instant } }

    func time(of position: Int) -> ContinuousClock.Instant? {
        times.withLock { position >= 0 && position < $0.count ? $0[position] : nil }
    }
}

/// A count tasks can wait on.
final class Counter: Sendable {
    private let state = Mutex<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>((0, []))

    func increment() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            let count = state.count
            let due = state.waiters.filter { $0.0 <= count }.map(\.1)
            state.waiters.removeAll { $0.0 <= count }
            return due
        }
        ready.forEach { $0.resume() }
    }

    func wait(for count: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}
