import Hummingbird
import Logging

/// The outermost middleware: applies the body limit, turns every error a route or an inner
/// middleware throws into the API's JSON error (never a bare 500), and logs one access line per
/// request (method, path, status, milliseconds) at `info`, and counts it in the metrics by
/// route pattern.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let logger: Logger
    let metrics: ServerMetrics
    let maxBodyBytes: Int

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        var context = context
        context.maxBodyBytes = maxBodyBytes
        let started = ContinuousClock.now
        metrics.requestsInFlight.add(1, ordering: .relaxed)
        defer { metrics.requestsInFlight.subtract(1, ordering: .relaxed) }
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = ErrorResponses.response(for: error)
        }
        let elapsed = started.duration(to: .now)
        metrics.request(route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code, duration: elapsed)
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        logger.info(
            "\(request.method.rawValue) \(request.uri.path) \(response.status.code) \(String(format: "%.1f", milliseconds)) ms")
        return response
    }
}
