import EventStoreCore
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import ServiceLifecycle

/// What the gRPC face serves on and with: the address, the API key, TLS, and the limits.
public struct GRPCOptions: Sendable {
    /// The address to listen on (loopback unless an API key is given).
    public var host: String
    /// The port; 0 takes a free one.
    public var port: Int
    /// The key every DCB call needs as `authorization: Bearer KEY` (UmaDB's API key); nil: none.
    public var apiKey: String?
    /// PEM files of the certificate chain and private key: TLS when both are given.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// The largest request message taken (gRPC's usual 4 MiB).
    public var maxRequestBytes = 4 << 20
    /// The connections held at once; past it, a new one is closed at once.
    public var maxConnections = 1024
    /// The batch, message and subscription bounds.
    public var limits = GRPCLimits()

    public init(host: String = "127.0.0.1", port: Int, apiKey: String? = nil) {
        self.host = host
        self.port = port
        self.apiKey = apiKey
    }

    /// Whether the face is served with TLS.
    public var usesTLS: Bool { tlsCertificatePath != nil && tlsKeyPath != nil }
}

/// The store over gRPC: UmaDB's `umadb.v1.DCB` service and `grpc.health.v1.Health`, on HTTP/2
/// (cleartext or TLS), as a service of a ServiceLifecycle group: it serves until the group
/// shuts down gracefully, then turns health to NOT_SERVING, lets the calls in flight finish
/// and stops.
///
/// Keepalive is set for UmaDB's clients, which ping every 5 s during a call: pings every second
/// or more apart are welcome, with or without calls, and the server pings a quiet connection
/// every 5 s itself. Connections are capped (``GRPCOptions/maxConnections``), and one that
/// sends nothing for 30 s, not even the answer to a ping, is closed (`ConnectionGuard`, internal).
public final class GRPCFace: Service, Sendable {
    let options: GRPCOptions
    let service: DCBService
    let health: HealthService
    let connections: ConnectionGuard
    let logger: Logger
    private let onListening: @Sendable (_ host: String, _ port: Int) async -> Void

    /// A face on `store`. `onListening` is told the address once the port is bound.
    public init(
        store: any LogAppending & LogReading, options: GRPCOptions, logger: Logger,
        onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
    ) {
        self.options = options
        self.service = DCBService(store: store, apiKey: options.apiKey, limits: options.limits)
        self.health = HealthService(maxWatchers: options.limits.subscriptions.capacity)
        self.connections = ConnectionGuard(capacity: options.maxConnections)
        self.logger = logger
        self.onListening = onListening
    }

    /// Serves until the group shuts down (or the task is cancelled). Throws the transport's
    /// error when the address cannot be bound.
    public func run() async throws {
        let transport = HTTP2ServerTransport.Posix(
            address: .ipv4(host: options.host, port: options.port), transportSecurity: try security(), config: config())
        let server = GRPCServer(transport: transport, services: [service, health])
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await server.serve() }
                if let address = try await transport.listeningAddress.ipv4 {
                    await onListening(address.host, address.port)
                }
            }
        } onGracefulShutdown: { [health] in
            health.stopServing()
            server.beginGracefulShutdown()
        }
    }

    private func security() throws -> HTTP2ServerTransport.Posix.TransportSecurity {
        guard let certificate = options.tlsCertificatePath, let key = options.tlsKeyPath else { return .plaintext }
        return .tls(certificateChain: [.file(path: certificate, format: .pem)], privateKey: .file(path: key, format: .pem))
    }

    private func config() -> HTTP2ServerTransport.Posix.Config {
        .defaults { [connections] config in
            config.channelDebuggingCallbacks.onAcceptTCPConnection = { channel in connections.accept(channel) }
            config.connection.keepalive = .init(
                time: .seconds(5), timeout: .seconds(10),
                clientBehavior: .init(minPingIntervalWithoutCalls: .seconds(1), allowWithoutCalls: true))
            config.rpc.maxRequestPayloadSize = options.maxRequestBytes
            // UmaDB's windows: a batch of a few MiB flows without waiting for window updates.
            config.http2.targetWindowSize = 4 << 20
        }
    }
}
