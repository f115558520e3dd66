import CoreMetrics
import Prometheus
import Synchronization

/// The server's metrics in Prometheus form: a registry that `GET /metrics` prints, the factory
/// the store and its projections should be opened with (``factory``) so that their metrics land
/// in it too, and the HTTP requests by route and status.
public final class ServerMetrics: Sendable {
    /// What `GET /metrics` prints.
    public let registry: PrometheusCollectorRegistry
    /// Open the store with `StoreConfiguration(metricsFactory: metrics.factory)` to see its appends,
    /// commits, subscriptions and projection lags at `/metrics`.
    public let factory: PrometheusMetricsFactory

    static let requestsLabel = "http_requests_total"
    static let durationLabel = "http_request_duration_seconds"

    /// The counters and timers made so far, by route, method and status: made once each, not
    /// per request (a registry lookup under its lock each time).
    private struct Handles {
        var counters: [String: CoreMetrics.Counter] = [:]
        var timers: [String: CoreMetrics.Timer] = [:]
    }

    private let handles = Mutex(Handles())
    static let standardMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"]

    /// A fresh registry.
    public init() {
        registry = PrometheusCollectorRegistry()
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// Counts one request answered: `route` is the route's pattern (`/streams/{stream}`), never
    /// the raw path, so that the number of series stays bounded.
    func request(route: String, method: String, status: Int, duration: Duration) {
        // A client may send any method name: only the standard ones get series of their own, so
        // the number of series (and of handles kept) stays bounded.
        let method = Self.standardMethods.contains(method) ? method : "OTHER"
        let (counter, timer) = handles.withLock { handles -> (CoreMetrics.Counter, CoreMetrics.Timer) in
            let key = "\(route) \(method) \(status)"
            let counter = handles.counters[key] ?? Counter(
                label: Self.requestsLabel, dimensions: [("route", route), ("method", method), ("status", String(status))], factory: factory)
            handles.counters[key] = counter
            let timer = handles.timers[route] ?? Timer(label: Self.durationLabel, dimensions: [("route", route)], factory: factory)
            handles.timers[route] = timer
            return (counter, timer)
        }
        counter.increment()
        let (seconds, attoseconds) = duration.components
        timer.recordNanoseconds(seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue &+ attoseconds / 1_000_000_000)
    }

    /// Requests that reached the routes and have not been answered yet.
    let requestsInFlight = Atomic<Int>(0)

    /// What clients hold now, against the server's caps: set before each scrape.
    struct Occupancy {
        var connections: Int
        var liveStreams: Int
        var waitingQueries: Int
    }

    /// The registry in Prometheus' text format, with `occupancy` and the requests in flight as
    /// gauges (`http_open_connections`, `http_open_live_streams`, `http_waiting_queries`,
    /// `http_requests_in_flight`).
    func text(occupancy: Occupancy) -> String {
        let gauges: [(String, String, Int)] = [
            ("http_open_connections", "Connections open now (cap: --max-connections).", occupancy.connections),
            ("http_open_live_streams", "Live streams open now (cap: --max-subscribers).", occupancy.liveStreams),
            ("http_waiting_queries", "Queries waiting for minPosition now (cap: --max-waits).", occupancy.waitingQueries),
            ("http_requests_in_flight", "Requests that reached the routes and are not answered yet.", requestsInFlight.load(ordering: .relaxed)),
        ]
        for (name, help, value) in gauges {
            // A name without a unit: the descriptor's empty unit adds nothing to it.
            registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help)).set(Double(value))
        }
        return registry.emitToString()
    }
}
