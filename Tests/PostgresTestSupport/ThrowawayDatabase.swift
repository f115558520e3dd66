import EventStore
import EventStorePostgres
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A database of its own for one test, in the cluster `ESTEST_POSTGRES_URL` names (the
/// throwaway cluster `scripts/with-postgres.sh` starts for `make test`), dropped by ``drop()``.
public struct ThrowawayDatabase: Sendable {
    /// The URL of the new database.
    public let url: String
    /// Its name.
    public let name: String

    /// The cluster's URL; a clear failure when it is not set, so PostgreSQL tests never skip silently.
    public static func clusterURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["ESTEST_POSTGRES_URL"], !url.isEmpty else {
            throw ThrowawayDatabaseError(
                "ESTEST_POSTGRES_URL is not set, so the PostgreSQL tests have no server: run them through `make test` or `scripts/with-postgres.sh swift test`.")
        }
        return url
    }

    /// Creates an empty database with a fresh name.
    public static func create() async throws -> ThrowawayDatabase {
        let cluster = try PostgresLocation(url: try clusterURL())
        let name = "es_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await Admin.shared.execute("CREATE DATABASE \(name)", cluster: cluster)
        var location = cluster
        location.database = name
        return ThrowawayDatabase(url: Self.url(of: location), name: name)
    }

    /// Drops the database, closing whatever connections are still open to it.
    public func drop() async throws {
        let cluster = try PostgresLocation(url: try Self.clusterURL())
        try await Admin.shared.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", cluster: cluster)
    }

    /// Runs `sql` as a superuser statement on the database itself (to damage a store on purpose, say).
    public func execute(_ sql: String) async throws {
        try await Admin.shared.execute(sql, cluster: try PostgresLocation(url: url))
    }

    /// Runs `sql` on the database and returns the first column of every row, as integers.
    public func integers(_ sql: String) async throws -> [Int64] {
        try await Admin.shared.integers(sql, cluster: try PostgresLocation(url: url))
    }

    /// Opens a connection of its own, begins a transaction and runs `sql` in it (a `SELECT ... FOR
    /// UPDATE`, say), and keeps the transaction open, with its locks, until ``HeldTransaction/release()``.
    public func holdTransaction(_ sql: String) async throws -> HeldTransaction {
        let logger = Admin.logger
        let connection = try await Admin.shared.connect(try PostgresLocation(url: url))
        do {
            try await connection.query("BEGIN", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        return HeldTransaction(connection: connection)
    }

    /// The URL of `location`, password included.
    static func url(of location: PostgresLocation) -> String {
        var text = "postgres://\(location.user)"
        if let password = location.password { text += ":\(password)" }
        text += "@\(location.host.isEmpty ? "localhost" : location.host):\(location.port)/\(location.database)"
        if let directory = location.socketDirectory { text += "?host=\(directory)" }
        return text
    }
}

/// A transaction kept open on a connection of its own, holding its locks until released.
public struct HeldTransaction: Sendable {
    let connection: PostgresConnection

    /// Commits the transaction (releasing its locks) and closes the connection.
    public func release() async throws {
        do {
            try await connection.query("COMMIT", logger: Admin.logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}

/// Why a throwaway database could not be made.
public struct ThrowawayDatabaseError: Error, CustomStringConvertible {
    public let description: String
    /// An error that says `description`.
    public init(_ description: String) { self.description = description }
}

/// Runs administrative statements, a short-lived connection each.
private final class Admin: Sendable {
    static let shared = Admin()

    static let logger = Logger(label: "test-admin", factory: { _ in SwiftLogNoOpLogHandler() })

    func execute(_ sql: String, cluster: PostgresLocation) async throws {
        let logger = Self.logger
        let connection = try await connect(cluster)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    func integers(_ sql: String, cluster: PostgresLocation) async throws -> [Int64] {
        let logger = Self.logger
        let connection = try await connect(cluster)
        do {
            var values: [Int64] = []
            for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Int64.self) {
                values.append(value)
            }
            try await connection.close()
            return values
        } catch {
            try? await connection.close()
            throw error
        }
    }

    func connect(_ cluster: PostgresLocation) async throws -> PostgresConnection {
        // Named apart from the store's connections ("eventstore..."), which tests count by name.
        var configuration = cluster.connectionConfiguration(.pool)
        configuration.options.additionalStartupParameters = [("application_name", "test admin")]
        return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Self.logger)
    }
}
