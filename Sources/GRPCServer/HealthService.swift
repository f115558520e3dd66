import GRPCCore
import Synchronization

/// gRPC's standard health service (`grpc.health.v1.Health`), as UmaDB's server answers it: the
/// server as a whole ("") and `umadb.v1.DCB` are SERVING until the server stops, when they turn
/// NOT_SERVING; any other name is NOT_FOUND. No API key is needed (load balancers ask it).
final class HealthService: Grpc_Health_V1_Health.ServiceProtocol, Sendable {
    /// The names answered: the server and each service it serves.
    private let names: Set<String> = ["", Umadb_V1_DCB.descriptor.fullyQualifiedService]
    private let state = Mutex<(serving: Bool, watchers: [Int: AsyncStream<Bool>.Continuation], next: Int)>((true, [:], 0))
    /// The watches open at once, at most; past it, Watch answers RESOURCE_EXHAUSTED.
    private let maxWatchers: Int

    init(maxWatchers: Int) {
        self.maxWatchers = maxWatchers
    }

    /// Marks every name NOT_SERVING and tells the watchers (the server is stopping).
    func stopServing() {
        let watchers = state.withLock { state in
            state.serving = false
            return Array(state.watchers.values)
        }
        for watcher in watchers {
            watcher.yield(false)
            watcher.finish()
        }
    }

    func check(request: ServerRequest<Grpc_Health_V1_HealthCheckRequest>, context: ServerContext) async throws
        -> ServerResponse<Grpc_Health_V1_HealthCheckResponse>
    {
        try known(request.message.service)
        return ServerResponse(message: Self.response(serving: state.withLock { $0.serving }))
    }

    func watch(request: ServerRequest<Grpc_Health_V1_HealthCheckRequest>, context: ServerContext) async throws
        -> StreamingServerResponse<Grpc_Health_V1_HealthCheckResponse>
    {
        try known(request.message.service)
        let (stream, continuation) = AsyncStream<Bool>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let registration: (id: Int, serving: Bool)? = state.withLock { state in
            guard state.watchers.count < maxWatchers else { return nil }
            let id = state.next
            state.next += 1
            if state.serving { state.watchers[id] = continuation }
            return (id, state.serving)
        }
        guard let registration else {
            throw RPCError(code: .resourceExhausted, message: "Too many health watches are open; try again later.")
        }
        continuation.yield(registration.serving)
        if !registration.serving { continuation.finish() }
        return StreamingServerResponse { writer in
            defer { _ = self.state.withLock { $0.watchers.removeValue(forKey: registration.id) } }
            // Until the client goes away (gRPC says so through the context only).
            try await untilCancelled(context) {
                for await serving in stream {
                    try await writer.write(Self.response(serving: serving))
                }
            }
            return [:]
        }
    }

    private func known(_ service: String) throws {
        guard names.contains(service) else { throw RPCError(code: .notFound, message: "service not registered") }
    }

    private static func response(serving: Bool) -> Grpc_Health_V1_HealthCheckResponse {
        var response = Grpc_Health_V1_HealthCheckResponse()
        response.status = serving ? .serving : .notServing
        return response
    }
}
