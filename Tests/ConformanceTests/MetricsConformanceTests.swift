import EventStore
import EventStoreTesting
import Foundation
import MetricsTestKit
import Projections
import ProjectionsTestSupport
import Testing

@Suite("Metrics through swift-metrics, on every backend")
struct MetricsConformanceTests {
    @Test("appends, events, commit sizes and times are counted; a retry writes no events", arguments: Backend.allCases)
    func appendsAreCounted(_ backend: Backend) async throws {
        let metrics = TestMetrics()
        try await withLog(backend, metricsFactory: metrics) { f in
            // Given a store whose metrics go to a test factory
            // When one append writes two streams (3 events), another one event, and the first is retried
            let first = [
                StreamAppend(stream: "a-1", events: [event("T", id: UUID()), event("T", id: UUID())]),
                StreamAppend(stream: "b-1", events: [event("T", id: UUID())]),
            ]
            _ = try await f.log.append(first)
            _ = try await f.log.append(to: "a-1", events: [event("T")])
            let retried = try await f.log.append(first)
            #expect(retried.map(\.alreadyRecorded) == [true, true])
        }
        // Then three appends were answered, and the events written are the four new ones
        #expect(metrics.counterTotal(label: "eventstore_appends_total") == 3)
        #expect(metrics.counterTotal(label: "eventstore_events_appended_total") == 4)
        let sizes = try metrics.expectRecorder("eventstore_commit_batch_size").values
        #expect(sizes.reduce(0, +) == Double(metrics.counterTotal(label: "eventstore_appends_total")))
        #expect(try metrics.expectTimer("eventstore_commit_duration_seconds").values.count == sizes.count)
    }

    @Test("an append that also writes tables counts as one append with its events", arguments: Backend.allCases)
    func appendsWithTablesAreCounted(_ backend: Backend) async throws {
        let metrics = TestMetrics()
        try await withLog(backend, metricsFactory: metrics) { f in
            // Given a store whose metrics go to a test factory, when an append also writes tables
            _ = try await f.log.append([StreamAppend(stream: "a-1", events: [event("T"), event("T")])], alsoWriting: { _, _ in })
        }
        // Then it is counted as any other append
        #expect(metrics.counterTotal(label: "eventstore_appends_total") == 1)
        #expect(metrics.counterTotal(label: "eventstore_events_appended_total") == 2)
        #expect(try metrics.expectTimer("eventstore_commit_duration_seconds").values.count == 1)
    }

    @Test("a subscription counts as open while it iterates, and its lag is sampled", arguments: Backend.allCases)
    func subscriptionsAreCounted(_ backend: Backend) async throws {
        let metrics = TestMetrics()
        try await withLog(backend, metricsFactory: metrics) { f in
            // Given two events
            _ = try await f.log.append(to: "s-1", events: [event("T"), event("T")])
            // When a subscription reads them
            let collector = EventCollector(f.log.subscription(from: .start))
            _ = try await collector.take(2, within: .seconds(10))
            // Then it is open, and a lag was recorded
            let open = try metrics.expectMeter("eventstore_subscriptions_open")
            #expect(open.lastValue == 1)
            #expect(!(try metrics.expectRecorder("eventstore_subscription_lag").values.isEmpty))
            // And when it is cancelled, it is not open any more
            collector.cancel()
            try await withTimeout(.seconds(10), "the open subscriptions gauge to return to 0") {
                while open.lastValue != 0 { await Task.yield() }
            }
        }
    }

    @Test("each projection's lag is a gauge, zero after a catch-up", arguments: Backend.allCases)
    func projectionLag(_ backend: Backend) async throws {
        let metrics = TestMetrics()
        try await withLog(backend, metricsFactory: metrics) { f in
            // Given three events and a runner that has not caught up
            _ = try await f.log.append(to: "acct-1", events: [event("Opened"), event("Deposited"), event("Closed")])
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger()])
            _ = try await runner.statuses()
            #expect(try metrics.expectGauge("eventstore_projection_lag", [("projection", "ledger")]).lastValue == 3)
            // When it catches up, then the lag is zero
            try await runner.catchUp()
            #expect(try metrics.expectGauge("eventstore_projection_lag", [("projection", "ledger")]).lastValue == 0)
        }
    }
}
