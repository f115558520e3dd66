import Hummingbird
import NIOCore

extension Server {
    /// `GET /metrics`: every metric in Prometheus' text format (version 0.0.4): the store's and
    /// the projections' (when the store was opened with ``ServerMetrics/factory``) and the HTTP
    /// requests by route, method and status, and what clients hold against the caps (open
    /// connections, live streams, waiting queries, requests in flight). Refreshes the
    /// projections' lags first.
    func addMetricsRoutes(to router: Router<ServerContext>) {
        router.get("/metrics") { _, _ -> Response in
            _ = try await self.runner.statuses()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(
                    byteBuffer: ByteBuffer(
                        string: self.metrics.text(
                            occupancy: ServerMetrics.Occupancy(
                                connections: self.connections.open, liveStreams: self.openStreams.count,
                                waitingQueries: self.waitCap.held)))))
        }
    }
}
