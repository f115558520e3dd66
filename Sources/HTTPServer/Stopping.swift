import Hummingbird
import ServiceLifecycle

/// Whether the server has begun to stop (SIGTERM, Ctrl-C), and a way to wait for it: set by a
/// service of the server's group that the stop reaches before the HTTP server
/// (``Server/run(alongside:onListening:)``).
final class StopSignal: Sendable {
    private let stopping = WatchedValue(false)

    /// Whether the stop has begun.
    var isStopping: Bool { stopping.value }

    /// Marks the stop as begun and wakes every waiter.
    func stop() { stopping.update { $0 = true } }

    /// Returns when the stop begins, or when the task is cancelled.
    func wait() async { await stopping.wait { $0 } }

    /// Runs `operation` (a wait that may last minutes), ending it with ``Stopping/error`` when the
    /// stop begins instead of holding the stop for the whole grace.
    func endingOnStop<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                await self.wait()
                return nil
            }
            defer { group.cancelAll() }
            // The first to end decides: the operation's answer, or the stop.
            guard let first = try await group.next(), let value = first else { throw Stopping.error }
            return value
        }
    }
}

/// The service of the server's group that notes the stop: it runs until the graceful shutdown
/// reaches it, which happens before the HTTP server's (the group stops its services last to
/// first, and this one is last).
struct StopWatcher: Service {
    let signal: StopSignal

    func run() async throws {
        try? await gracefulShutdown()
        signal.stop()
    }
}

/// While the server stops gracefully, a request that reaches the routes is answered 503 with
/// `Retry-After` and `Connection: close`, and nothing is done: the requests already running
/// finish within the grace (``ServerOptions/shutdownGrace``), the rest learn the server is going.
/// (A request the connection closes on before it is answered gets its 503 from
/// ``ConnectionGuardHandler``.)
struct StoppingMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let signal: StopSignal

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        guard !signal.isStopping else { throw Stopping.error }
        return try await next(request, context)
    }
}

/// The answer of a request the stopping server does not serve.
enum Stopping {
    /// ``ServerError/Code/unavailable`` (503): the server is stopping.
    static let error = ServerError(.unavailable, "The server is stopping; send the request again once it is back.")
}
