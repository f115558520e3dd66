import Foundation

/// How `esctl serve` (or a program embedding ``Server``) listens and what it allows.
public struct ServerOptions: Sendable {
    /// The address to bind: loopback (`127.0.0.1`) unless told otherwise.
    public var host: String
    /// The port; 0 takes a free one (``Server/run(onListening:)`` reports which).
    public var port: Int
    /// The token every route but `/health` and the console's page needs; nil: none needed
    /// (allowed on loopback only, see ``validate()``).
    public var token: String?
    /// The largest request body accepted; larger ones get 413 without being read whole.
    public var maxBodyBytes: Int
    /// The chat room the chat protocol (`/chat/room`, `/chat/say`) talks to.
    public var chatRoom: String
    /// How often an idle live stream sends a heartbeat, on the server's clock.
    public var heartbeat: Duration
    /// How long a graceful stop may take before open connections are cut.
    public var shutdownGrace: Duration

    /// The default body limit: 4 MiB.
    public static let defaultMaxBodyBytes = 4 * 1024 * 1024

    public init(
        host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, maxBodyBytes: Int = ServerOptions.defaultMaxBodyBytes,
        chatRoom: String = "default", heartbeat: Duration = .seconds(15), shutdownGrace: Duration = .seconds(4)
    ) {
        self.host = host
        self.port = port
        self.token = token
        self.maxBodyBytes = maxBodyBytes
        self.chatRoom = chatRoom
        self.heartbeat = heartbeat
        self.shutdownGrace = shutdownGrace
    }

    /// Whether `host` names this machine only (`127.0.0.0/8`, `::1`, `localhost`).
    public var isLoopback: Bool {
        let host = host.lowercased()
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// Checks the options before anything binds. Throws ``ServerError`` with
    /// ``ServerError/Code/invalidConfiguration`` for a non-loopback host without a token, an empty
    /// token, a port outside 0...65535 or a body limit below 1 byte.
    public func validate() throws(ServerError) {
        guard (0...65535).contains(port) else {
            throw ServerError(.invalidConfiguration, "The port must be between 0 and 65535 (0 takes a free port).")
        }
        guard maxBodyBytes >= 1 else {
            throw ServerError(.invalidConfiguration, "The body limit must be at least 1 byte.")
        }
        if let token, token.isEmpty {
            throw ServerError(.invalidConfiguration, "The token is empty; give a non-empty --token (or $ESCTL_TOKEN).")
        }
        if !isLoopback && token == nil {
            throw ServerError(
                .invalidConfiguration,
                "Serving on '\(host)', which is not loopback, needs a token: give --token (or $ESCTL_TOKEN), or serve on 127.0.0.1.")
        }
    }
}
