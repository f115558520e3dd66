import EventStoreCore
import Foundation
import PostgresNIO

/// Where a PostgreSQL store is: a `postgres://` (or `postgresql://`) URL,
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, with `?host=/path/to/socket/dir` for a
/// Unix socket (the host part is then ignored, as libpq does).
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// The user to connect as.
    public var user: String
    /// The password, if any (never printed: see ``description``).
    public var password: String?
    /// The host name, for TCP.
    public var host: String
    /// The port (default 5432); for a Unix socket, the number in the socket's file name.
    public var port: Int
    /// The database.
    public var database: String
    /// The directory of the server's Unix socket, when connecting through one.
    public var socketDirectory: String?

    /// Whether `text` is meant as a PostgreSQL URL (it starts with `postgres://` or
    /// `postgresql://`), as opposed to a store directory.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses a URL. Throws `EventStoreError` with `EventStoreError.Code.invalidInput` (one
    /// sentence saying what is wrong) for anything else.
    public init(url text: String) throws {
        func invalid(_ why: String) -> EventStoreError {
            EventStoreError(
                .invalidInput,
                "The PostgreSQL URL is not usable: \(why); write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, with ?host=/socket/dir for a Unix socket.")
        }
        guard Self.isURL(text), let components = URLComponents(string: text) else {
            throw invalid("it does not parse as a URL")
        }
        guard let user = components.user, !user.isEmpty else { throw invalid("it names no user") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw invalid("it names no database (the path after the host)") }
        var socketDirectory: String?
        for item in components.queryItems ?? [] {
            switch item.name {
            case "host":
                guard let value = item.value, value.hasPrefix("/") else {
                    throw invalid("its host parameter is not an absolute directory")
                }
                socketDirectory = value
            default:
                throw invalid("the parameter '\(item.name)' is not supported (only host)")
            }
        }
        let host = components.host ?? ""
        guard socketDirectory != nil || !host.isEmpty else { throw invalid("it names no host") }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw invalid("its port \(port) is out of range") }
        self.user = components.user?.removingPercentEncoding ?? user
        self.password = components.password?.removingPercentEncoding ?? components.password
        self.host = host
        self.port = port
        self.database = database.removingPercentEncoding ?? database
        self.socketDirectory = socketDirectory
    }

    /// The Unix socket's path, when connecting through one.
    public var socketPath: String? {
        socketDirectory.map { "\($0)/.s.PGSQL.\(port)" }
    }

    /// The URL with the password replaced by `***`: fit for messages and logs.
    public var description: String {
        var text = "postgres://\(user)"
        if password != nil { text += ":***" }
        text += "@\(host)"
        if port != 5432 { text += ":\(port)" }
        text += "/\(database)"
        if let socketDirectory { text += "?host=\(socketDirectory)" }
        return text
    }
}

/// What a connection of a handle is for, sent as its `application_name`: `pg_stat_activity`
/// then tells an operator (and the tests) which connection of a store is which.
package enum ConnectionRole: String, Sendable {
    /// A connection of the handle's pool: appends, reads, table transactions.
    case pool = "eventstore"
    /// The connection that LISTENs for appends.
    case listen = "eventstore listen"
    /// The connection that holds the handle's owner lock.
    case owner = "eventstore owner"
    /// The open's probe, made when the pool is slow to connect.
    case probe = "eventstore probe"
}

extension PostgresLocation {
    /// A single connection's configuration: the socket or host, the login, no TLS (not
    /// configurable by the URL yet; docs/SCALING.md), 10 s to connect, and `role` as its
    /// application name.
    package func connectionConfiguration(_ role: ConnectionRole) -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let socketPath {
            configuration = .init(unixSocketPath: socketPath, username: user, password: password, database: database)
        } else {
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: .disable)
        }
        configuration.options.connectTimeout = .seconds(10)
        configuration.options.additionalStartupParameters = [("application_name", role.rawValue)]
        return configuration
    }

    /// The pool's configuration: as ``connectionConfiguration(_:)`` for ``ConnectionRole/pool``,
    /// at most 16 connections.
    var clientConfiguration: PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketPath {
            configuration = .init(unixSocketPath: socketPath, username: user, password: password, database: database)
        } else {
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: .disable)
        }
        configuration.options.connectTimeout = .seconds(10)
        configuration.options.maximumConnections = 16
        configuration.options.additionalStartupParameters = [("application_name", ConnectionRole.pool.rawValue)]
        return configuration
    }
}
