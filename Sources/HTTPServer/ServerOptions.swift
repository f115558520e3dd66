import Foundation

/// How `esctl serve` (or a program embedding ``Server``) listens and what it allows.
public struct ServerOptions: Sendable {
    /// The address to bind: loopback (`127.0.0.1`) unless told otherwise.
    public var host: String
    /// The port; 0 takes a free one (``Server/run(alongside:onListening:)`` reports which).
    public var port: Int
    /// The token every route but `/health` and the console's page needs; nil: none needed
    /// (allowed on loopback only, see ``validate()``).
    public var token: String?
    /// The largest request body accepted; larger ones get 413 without being read whole.
    public var maxBodyBytes: Int
    /// How often an idle live stream sends a heartbeat, on the server's clock.
    public var heartbeat: Duration
    /// How long a graceful stop may take before open connections are cut.
    public var shutdownGrace: Duration
    /// The most connections served at once; past it, new ones are answered 503 with
    /// `Retry-After` and closed. Nil: the default, ``defaultMaxConnections(descriptorLimit:)``
    /// of the process's descriptor limit (which ``Server/run(alongside:onListening:)`` raises to its hard
    /// limit first).
    public var maxConnections: Int? = nil
    /// How long a connection may wait for a request's head (slow headers, idle keep-alive) or
    /// between two parts of a body before it is closed.
    public var idleTimeout: Duration = .seconds(30)
    /// How long a request's whole body may take to arrive after its head.
    public var bodyTimeout: Duration = .seconds(30)
    /// How long a connection may leave what the server writes untaken (the socket's buffers
    /// full: a live stream's or a large answer's client that stopped reading) before it is
    /// closed. A live stream's client resumes after the last id it read (`Last-Event-ID`).
    public var stallTimeout: Duration = .seconds(30)
    /// The most live streams (`/subscribe`, an app's live routes) open at once; past it, 503 with
    /// `Retry-After`. Each holds at most about a subscription page and an event in memory.
    public var maxSubscribers: Int = 256
    /// The most queries waiting at once for a projection to reach `minPosition`; past it, 503
    /// with `Retry-After`.
    public var maxWaits: Int = 512
    /// A PEM file with the server's certificate (and the chain after it): with ``tlsKeyPath``,
    /// the server speaks HTTPS only, and the session cookie is `Secure`.
    public var tlsCertificatePath: String? = nil
    /// The PEM file with the certificate's private key.
    public var tlsKeyPath: String? = nil
    /// Whether the server speaks HTTPS.
    public var usesTLS: Bool { tlsCertificatePath != nil }
    /// Web origins (`https://app.example`) whose pages may call the server beside its own;
    /// `*` allows every one. Others get 403.
    public var allowedOrigins: [String] = []
    /// Host names a request's `Host` may give beside the server's own (IP addresses,
    /// `localhost`, the listening address, the machine's name); `*` allows every one. Others
    /// get 421, as DNS-rebinding pages do.
    public var allowedHosts: [String] = []

    /// The shortest token accepted: 16 characters.
    public static let minimumTokenLength = 16

    /// The default body limit: 4 MiB.
    public static let defaultMaxBodyBytes = 4 * 1024 * 1024

    public init(
        host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, maxBodyBytes: Int = ServerOptions.defaultMaxBodyBytes,
        heartbeat: Duration = .seconds(15), shutdownGrace: Duration = .seconds(4)
    ) {
        self.host = host
        self.port = port
        self.token = token
        self.maxBodyBytes = maxBodyBytes
        self.heartbeat = heartbeat
        self.shutdownGrace = shutdownGrace
    }

    /// The connection cap for a process that may open `descriptorLimit` files: half of them,
    /// less a reserve for the store, its logs and the refusals (the connection gauge), between 16
    /// and 1,024.
    public static func defaultMaxConnections(descriptorLimit: Int) -> Int {
        min(1024, max(16, (descriptorLimit - descriptorReserve) / 2))
    }

    /// The open files kept for the store, its logs and the process itself, beside connections.
    static let descriptorReserve = 128

    /// Whether `host` names this machine only (`127.0.0.0/8`, `::1`, `localhost`), decided by
    /// the address, not its spelling (`127.evil.example` is not loopback).
    public var isLoopback: Bool {
        IPAddressText.isLoopback(host)
    }

    /// Checks the options before anything binds. Throws ``ServerError`` with
    /// ``ServerError/Code/invalidConfiguration`` for a non-loopback host without a token, an empty
    /// token or one shorter than ``minimumTokenLength``, a port outside 0...65535 or a body limit below 1 byte.
    public func validate() throws(ServerError) {
        guard (0...65535).contains(port) else {
            throw ServerError(.invalidConfiguration, "The port must be between 0 and 65535 (0 takes a free port).")
        }
        if let maxConnections, maxConnections < 1 {
            throw ServerError(.invalidConfiguration, "The connection cap must be at least 1 (--max-connections).")
        }
        guard idleTimeout > .zero, bodyTimeout > .zero, stallTimeout > .zero else {
            throw ServerError(.invalidConfiguration, "The idle, body and stall timeouts must be longer than 0 seconds.")
        }
        guard maxSubscribers >= 1, maxWaits >= 1 else {
            throw ServerError(.invalidConfiguration, "The caps on subscribers and waits must be at least 1 (--max-subscribers, --max-waits).")
        }
        guard maxBodyBytes >= 1 else {
            throw ServerError(.invalidConfiguration, "The body limit must be at least 1 byte.")
        }
        if (tlsCertificatePath == nil) != (tlsKeyPath == nil) {
            throw ServerError(.invalidConfiguration, "TLS needs both a certificate and its key: give --tls-cert and --tls-key together.")
        }
        if let token, token.isEmpty {
            throw ServerError(.invalidConfiguration, "The token is empty; give a non-empty --token (or $ESCTL_TOKEN).")
        }
        if let token, token.count < Self.minimumTokenLength {
            throw ServerError(
                .invalidConfiguration,
                "The token has \(token.count) characters; give one of at least \(Self.minimumTokenLength) (for example the output of `openssl rand -hex 16`), as it is all that guards the store.")
        }
        if !isLoopback && token == nil {
            throw ServerError(
                .invalidConfiguration,
                "Serving on '\(host)', which is not loopback, needs a token: give --token (or $ESCTL_TOKEN), or serve on 127.0.0.1.")
        }
    }
}
