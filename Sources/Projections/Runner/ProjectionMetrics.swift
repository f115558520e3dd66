import CoreMetrics
import EventStoreCore

/// Each projection's lag through swift-metrics: the gauge `eventstore_projection_lag` with the
/// dimension `projection`, in positions behind the head, set after each catch-up and each status
/// read. Made by the store's ``StoreConfiguration/metricsFactory`` (the process's `MetricsSystem`
/// when nil).
final class ProjectionMetrics: Sendable {
    static let lagLabel = "eventstore_projection_lag"
    private let lags: [String: Gauge]

    init(projections: [any Projection], factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        lags = Dictionary(
            projections.map { ($0.name, Gauge(label: Self.lagLabel, dimensions: [("projection", $0.name)], factory: factory)) },
            uniquingKeysWith: { first, _ in first })
    }

    /// Records that `projection` is `lag` positions behind the head.
    func lag(_ projection: String, _ lag: UInt64) {
        lags[projection]?.record(Int64(clamping: lag))
    }
}
