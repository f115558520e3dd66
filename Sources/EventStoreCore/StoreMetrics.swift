import CoreMetrics

/// What a store tells through swift-metrics, on every backend and whether or not a server runs:
/// a program that bootstraps a metrics backend (Prometheus, StatsD, OpenTelemetry) sees them.
///
/// | Name | Kind | What |
/// |---|---|---|
/// | `eventstore_appends_total` | counter | appends committed (an atomic append across streams counts once) |
/// | `eventstore_events_appended_total` | counter | events those appends wrote |
/// | `eventstore_commit_batch_size` | histogram | appends committed together in one transaction (group commit) |
/// | `eventstore_commit_duration_seconds` | timer | the time of one commit, sync included |
/// | `eventstore_subscriptions_open` | gauge | subscriptions iterating now |
/// | `eventstore_subscription_lag` | histogram | positions between a subscription and the head, sampled at each page and wait |
package final class StoreMetrics: Sendable {
    package static let appendsLabel = "eventstore_appends_total"
    package static let eventsAppendedLabel = "eventstore_events_appended_total"
    package static let commitBatchSizeLabel = "eventstore_commit_batch_size"
    package static let commitDurationLabel = "eventstore_commit_duration_seconds"
    package static let openSubscriptionsLabel = "eventstore_subscriptions_open"
    package static let subscriptionLagLabel = "eventstore_subscription_lag"

    private let appends: Counter
    private let eventsAppended: Counter
    private let commitBatchSize: Recorder
    private let commitDuration: Timer
    private let openSubscriptions: Meter
    private let subscriptionLag: Recorder

    /// The metrics made by `factory`, or by the process's `MetricsSystem` when nil.
    package init(factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        appends = Counter(label: Self.appendsLabel, factory: factory)
        eventsAppended = Counter(label: Self.eventsAppendedLabel, factory: factory)
        commitBatchSize = Recorder(label: Self.commitBatchSizeLabel, dimensions: [], aggregate: true, factory: factory)
        commitDuration = Timer(label: Self.commitDurationLabel, factory: factory)
        openSubscriptions = Meter(label: Self.openSubscriptionsLabel, factory: factory)
        subscriptionLag = Recorder(label: Self.subscriptionLagLabel, dimensions: [], aggregate: true, factory: factory)
    }

    /// One commit of `appends` appends (already recorded ones not counted) writing `events`
    /// events, taking `duration`.
    package func committed(appends count: Int, events: Int, duration: Duration) {
        if count > 0 {
            appends.increment(by: count)
            commitBatchSize.record(count)
        }
        if events > 0 { eventsAppended.increment(by: events) }
        let (seconds, attoseconds) = duration.components
        commitDuration.recordNanoseconds(seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ attoseconds / 1_000_000_000)
    }

    /// A subscription started iterating.
    package func subscriptionOpened() { openSubscriptions.increment() }

    /// A subscription stopped iterating (it ended, failed, or its iterator was released).
    package func subscriptionClosed() { openSubscriptions.decrement() }

    /// A subscription's distance from the head.
    package func subscriptionLag(_ lag: UInt64) { subscriptionLag.record(Int64(clamping: lag)) }
}
