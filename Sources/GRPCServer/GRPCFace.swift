import EventStoreCore
import GRPCCore
import Logging
import NIOCore
import NIOSSL
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
/// The transport is the face's own (`FrameTransport`, internal: HTTP/2 frame by frame, no
/// channel or task bridge per call); the calls themselves are grpc-swift's.
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

    /// Serves until the group shuts down (or the task is cancelled). Throws when the address
    /// cannot be bound, or the TLS files cannot be read.
    public func run() async throws {
        let transport = FrameTransport(
            config: .init(
                host: options.host, port: options.port, tls: try tls(),
                connection: ConnectionSettings(
                    maxRequestBytes: options.maxRequestBytes,
                    // UmaDB's windows: a batch of a few MiB flows without waiting for window updates.
                    windowBytes: 4 << 20,
                    keepaliveInterval: .seconds(5))),
            connections: connections)
        let server = GRPCServer(transport: transport, services: [service, health])
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await server.serve() }
                await onListening(options.host, try await transport.listeningPort)
            }
        } onGracefulShutdown: { [health] in
            health.stopServing()
            server.beginGracefulShutdown()
        }
    }

    /// The TLS context of the certificate and key, offering HTTP/2 only; nil without them.
    private func tls() throws -> NIOSSLContext? {
        guard let certificate = options.tlsCertificatePath, let key = options.tlsKeyPath else { return nil }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["h2"]
        // A client that never answers close_notify must not hold a stop past its grace.
        configuration.shutdownTimeout = .milliseconds(500)
        return try NIOSSLContext(configuration: configuration)
    }
}
