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

    /// The URL of `location`, password included.
    static func url(of location: PostgresLocation) -> String {
        var text = "postgres://\(location.user)"
        if let password = location.password { text += ":\(password)" }
        text += "@\(location.host.isEmpty ? "localhost" : location.host):\(location.port)/\(location.database)"
        if let directory = location.socketDirectory { text += "?host=\(directory)" }
        return text
    }
}

/// Why a throwaway database could not be made.
public struct ThrowawayDatabaseError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Runs administrative statements, a short-lived connection each.
private final class Admin: Sendable {
    static let shared = Admin()

    func execute(_ sql: String, cluster: PostgresLocation) async throws {
        let logger = Logger(label: "test-admin", factory: { _ in SwiftLogNoOpLogHandler() })
        let connection = try await PostgresConnection.connect(configuration: cluster.connectionConfiguration, id: 1, logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
