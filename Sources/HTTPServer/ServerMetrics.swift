import CoreMetrics
import Prometheus

/// The server's metrics in Prometheus form: a registry that `GET /metrics` prints, the factory
/// the store and its projections should be opened with (``factory``) so that their metrics land
/// in it too, and the HTTP requests by route and status.
public final class ServerMetrics: Sendable {
    /// What `GET /metrics` prints.
    public let registry: PrometheusCollectorRegistry
    /// Open the store with `Configuration(metricsFactory: metrics.factory)` to see its appends,
    /// commits, subscriptions and projection lags at `/metrics`.
    public let factory: PrometheusMetricsFactory

    static let requestsLabel = "http_requests_total"
    static let durationLabel = "http_request_duration_seconds"

    /// A fresh registry.
    public init() {
        registry = PrometheusCollectorRegistry()
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// Counts one request answered: `route` is the route's pattern (`/streams/{stream}`), never
    /// the raw path, so that the number of series stays bounded.
    func request(route: String, method: String, status: Int, duration: Duration) {
        Counter(label: Self.requestsLabel, dimensions: [("route", route), ("method", method), ("status", String(status))], factory: factory)
            .increment()
        let (seconds, attoseconds) = duration.components
        Timer(label: Self.durationLabel, dimensions: [("route", route)], factory: factory)
            .recordNanoseconds(seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ attoseconds / 1_000_000_000)
    }

    /// The registry in Prometheus' text format.
    func text() -> String { registry.emitToString() }
}
