import EventStoreCore
import Foundation
import PostgresNIO

/// Where a PostgreSQL store is: a `postgres://` (or `postgresql://`) URL,
/// `postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]...]/DATABASE`, with
/// `?host=/path/to/socket/dir` for a Unix socket (the host names are then ignored and each port
/// names a socket file, as libpq does) and `target_session_attrs=` to say which of several hosts
/// to use (libpq's values: ``TargetSessionAttributes``).
///
/// With several hosts (a primary and its standbys), the store connects to the first that has the
/// wanted role, and after a failover finds the new one by itself (docs/SCALING.md).
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// One server of the URL.
    public struct Endpoint: Sendable, Equatable, CustomStringConvertible {
        /// The host name, for TCP (ignored with a socket directory).
        public var host: String
        /// The port (default 5432); for a Unix socket, the number in the socket's file name.
        public var port: Int

        /// Creates an endpoint.
        public init(host: String, port: Int = 5432) {
            self.host = host
            self.port = port
        }

        /// `host:port`, `[v6]:port` for an IPv6 address.
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// Which server of several a connection may use: libpq's `target_session_attrs`.
    public enum TargetSessionAttributes: String, Sendable, CaseIterable {
        /// The first server that takes the connection.
        case any
        /// A server whose sessions may write (not a standby, not `default_transaction_read_only`).
        case readWrite = "read-write"
        /// A server whose sessions are read-only.
        case readOnly = "read-only"
        /// A server that is not in recovery (the primary).
        case primary
        /// A server in recovery (a standby).
        case standby
        /// A standby if one takes the connection, any server otherwise.
        case preferStandby = "prefer-standby"
    }

    /// The user to connect as.
    public var user: String
    /// The password, if any (never printed: see ``description``).
    public var password: String?
    /// Every server of the URL, in its order (at least one).
    public var endpoints: [Endpoint]
    /// The database.
    public var database: String
    /// The directory of the server's Unix socket, when connecting through one.
    public var socketDirectory: String?
    /// The URL's `target_session_attrs`, when it gives one (see ``effectiveTargetSessionAttributes(writing:)``).
    public var targetSessionAttributes: TargetSessionAttributes?

    /// The most servers a URL may name.
    public static let maximumEndpoints = 16

    /// The first server's host name.
    public var host: String {
        get { endpoints[0].host }
        set { endpoints[0].host = newValue }
    }

    /// The first server's port.
    public var port: Int {
        get { endpoints[0].port }
        set { endpoints[0].port = newValue }
    }

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
                "The PostgreSQL URL is not usable: \(why); write postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]...]/DATABASE, with ?host=/socket/dir for a Unix socket.")
        }
        guard Self.isURL(text), text.utf8.count <= 4096, let schemeEnd = text.range(of: "://") else {
            throw invalid("it does not parse as a URL")
        }
        // URLComponents takes one host: the list of hosts is read here, and the rest of the URL
        // is parsed with a single placeholder host in its place.
        let afterScheme = text[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        let hostList: Substring
        let userInfo: Substring?
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            hostList = authority[authority.index(after: at)...]
        } else {
            userInfo = nil
            hostList = authority
        }
        let placeholder = "postgres://" + (userInfo.map { $0 + "@" } ?? "") + "placeholder" + afterScheme[authorityEnd...]
        guard let components = URLComponents(string: placeholder) else { throw invalid("it does not parse as a URL") }
        guard let user = components.user, !user.isEmpty else { throw invalid("it names no user") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw invalid("it names no database (the path after the host)") }
        var socketDirectory: String?
        var attributes: TargetSessionAttributes?
        for item in components.queryItems ?? [] {
            switch item.name {
            case "host":
                guard let value = item.value, value.hasPrefix("/") else {
                    throw invalid("its host parameter is not an absolute directory")
                }
                socketDirectory = value
            case "target_session_attrs":
                guard let value = item.value, let parsed = TargetSessionAttributes(rawValue: value) else {
                    let known = TargetSessionAttributes.allCases.map(\.rawValue).joined(separator: ", ")
                    throw invalid("its target_session_attrs '\(item.value ?? "")' is not one of \(known)")
                }
                attributes = parsed
            default:
                throw invalid("the parameter '\(item.name)' is not supported (only host and target_session_attrs)")
            }
        }
        let endpoints = try Self.endpoints(hostList, socketDirectory: socketDirectory, invalid: invalid)
        // Decoded once, from the text as written (URLComponents' `user` is decoded already).
        func decoded(_ text: String?, _ what: String) throws -> String? {
            guard let text else { return nil }
            let value = text.removingPercentEncoding ?? text
            guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
                throw invalid("its \(what) holds a control character")
            }
            return value
        }
        let encodedDatabase = String(components.percentEncodedPath.drop(while: { $0 == "/" }))
        self.user = try decoded(components.percentEncodedUser, "user") ?? user
        self.password = try decoded(components.percentEncodedPassword, "password")
        self.endpoints = endpoints
        self.database = try decoded(encodedDatabase, "database") ?? database
        self.socketDirectory = socketDirectory
        self.targetSessionAttributes = attributes
    }

    /// Reads `HOST[:PORT][,HOST[:PORT]...]`; an IPv6 address is written in brackets. With a socket
    /// directory the host names may be empty (`:5432,:5433`); without one, each needs a name.
    private static func endpoints(
        _ list: Substring, socketDirectory: String?, invalid: (String) -> EventStoreError
    ) throws -> [Endpoint] {
        let items = list.split(separator: ",", omittingEmptySubsequences: false)
        guard items.count <= maximumEndpoints else { throw invalid("it names \(items.count) hosts, more than \(maximumEndpoints)") }
        return try items.map { item in
            var host: Substring
            var portText: Substring?
            if item.hasPrefix("[") {
                guard let close = item.firstIndex(of: "]") else { throw invalid("its host '\(item)' opens a bracket it does not close") }
                host = item[item.index(after: item.startIndex)..<close]
                let rest = item[item.index(after: close)...]
                if !rest.isEmpty {
                    guard rest.hasPrefix(":") else { throw invalid("its host '\(item)' has text after its bracket") }
                    portText = rest.dropFirst()
                }
            } else if let colon = item.lastIndex(of: ":") {
                host = item[..<colon]
                portText = item[item.index(after: colon)...]
                guard !host.contains(":") else { throw invalid("its host '\(item)' is an IPv6 address without brackets; write [ADDRESS]:PORT") }
            } else {
                host = item
            }
            let name = host.removingPercentEncoding ?? String(host)
            guard socketDirectory != nil || !name.isEmpty else { throw invalid("it names no host") }
            guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f || $0 == "/" || $0 == "@" }) else {
                throw invalid("a host name holds a control character, '/' or '@'")
            }
            var port = 5432
            if let portText {
                guard portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let parsed = Int(portText), (1...65535).contains(parsed) else {
                    throw invalid("its port '\(portText)' is not a number from 1 to 65535")
                }
                port = parsed
            }
            return Endpoint(host: name, port: port)
        }
    }

    /// The `target_session_attrs` a connection uses: the URL's, or when it gives none,
    /// ``TargetSessionAttributes/readWrite`` for a handle that writes and
    /// ``TargetSessionAttributes/any`` for a read-only one.
    public func effectiveTargetSessionAttributes(writing: Bool) -> TargetSessionAttributes {
        targetSessionAttributes ?? (writing ? .readWrite : .any)
    }

    /// Whether connecting needs a look at each server's role first: several servers, or a
    /// `target_session_attrs` other than `any` (one server of the wrong role is refused then).
    var choosesAmongServers: Bool {
        endpoints.count > 1 || (targetSessionAttributes.map { $0 != .any } ?? false)
    }

    /// The same location narrowed to its server `index` (the one a connection is made to).
    func narrowed(to index: Int) -> PostgresLocation {
        var location = self
        location.endpoints = [endpoints[index]]
        return location
    }

    /// The Unix socket's path of the first server, when connecting through one.
    public var socketPath: String? {
        socketDirectory.map { "\($0)/.s.PGSQL.\(port)" }
    }

    /// The URL with the password replaced by `***`: fit for messages and logs.
    public var description: String {
        var text = "postgres://\(user)"
        if password != nil { text += ":***" }
        text += "@"
        text += endpoints.map { $0.port == 5432 ? ($0.host.contains(":") ? "[\($0.host)]" : $0.host) : $0.description }.joined(separator: ",")
        text += "/\(database)"
        var parameters: [String] = []
        if let socketDirectory { parameters.append("host=\(socketDirectory)") }
        if let targetSessionAttributes { parameters.append("target_session_attrs=\(targetSessionAttributes.rawValue)") }
        if !parameters.isEmpty { text += "?" + parameters.joined(separator: "&") }
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
