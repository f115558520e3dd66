import EventStoreCore
import Logging
import PostgresNIO

/// Finds, creates or refuses the store's tables when a store opens.
enum PostgresSchemaSetup {
    /// The advisory lock that serialises creating and upgrading the schema across processes.
    static let lockKey: Int64 = 0x6573_7363_6865_6d61 // "esschema"

    /// Checks the database's schema version and returns the head and the version the database is
    /// at now. Creates the tables when there are none and `mode` allows it; upgrades an older
    /// version in place (unless read-only, which reads it as it is); refuses a newer one.
    static func prepare(
        _ client: PoolSwitch, location: PostgresLocation, mode: OpenMode, logger: Logger
    ) async throws -> (head: UInt64, schemaVersion: Int) {
        do {
            var version = try await installedVersion(client, logger: logger)
            if version == nil {
                guard mode == .createIfMissing else {
                    throw EventStoreError(
                        .notFound,
                        "There is no event store in the PostgreSQL database \(location); create one with `esctl init` or a first append.")
                }
                try await client.withTransaction(logger: logger) { connection in
                    try await connection.statement("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
                    // Another process may have created it while this one waited for the lock. Read
                    // by a query of the catalog, whose snapshot this statement takes after the lock
                    // was granted: `to_regclass` looks up a cache that may not have heard of the
                    // other's commit yet (two first opens at once once failed with 42P07 so).
                    let rows = try await connection.statement(
                        "SELECT EXISTS (SELECT FROM pg_catalog.pg_tables WHERE schemaname = 'eventstore' AND tablename = 'schema_version')",
                        logger: logger)
                    var exists = false
                    for try await found in rows.decode(Bool.self) { exists = found }
                    guard !exists else { return }
                    for statement in PostgresSchema.creation {
                        try await connection.statement(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
                version = try await installedVersion(client, logger: logger)
            }
            guard let version else {
                throw EventStoreError(.damaged, "The store's schema version row is missing in \(location); run `esctl verify`.")
            }
            if version > PostgresSchema.version {
                throw EventStoreError(
                    .storeUnavailable,
                    "The store in \(location) has schema version \(version), newer than this program knows (\(PostgresSchema.version)); use a newer esctl or library.")
            }
            var current = version
            if version < PostgresSchema.version, mode != .readOnly {
                try await upgrade(client, from: version, location: location, logger: logger)
                current = PostgresSchema.version
            }
            return (try await PostgresEventStore.readHead(client, logger: logger), current)
        } catch {
            throw PostgresErrors.mapped(error, location: location.description)
        }
    }

    /// Brings the schema from `version` to ``PostgresSchema/version`` step by step, each step in
    /// one transaction under the schema lock; a process that finds the step done while it
    /// waited for the lock goes on from the version it finds.
    static func upgrade(_ client: PoolSwitch, from version: Int, location: PostgresLocation, logger: Logger) async throws {
        var current = version
        while current < PostgresSchema.version {
            guard let steps = PostgresSchema.upgrades[current] else {
                throw EventStoreError(
                    .storeUnavailable,
                    "The store in \(location) has schema version \(current), which this program cannot upgrade; use an esctl of the version that wrote it to export the store.")
            }
            current = try await client.withTransaction(logger: logger) { connection in
                try await connection.statement("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
                var found = current
                for try await recorded in try await connection.statement("SELECT version FROM eventstore.schema_version", logger: logger)
                    .decode(Int32.self) { found = Int(recorded) }
                guard found == current else { return found }
                for statement in steps {
                    try await connection.statement(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.statement(
                    PostgresQuery(unsafeSQL: "UPDATE eventstore.schema_version SET version = \(current + 1)"), logger: logger)
                logger.info(
                    "upgraded the store's schema", metadata: ["store": "\(location)", "from": "\(current)", "to": "\(current + 1)"])
                return current + 1
            }
        }
    }

    /// The schema version recorded in the database; nil when it holds no store.
    static func installedVersion(_ client: PoolSwitch, logger: Logger) async throws -> Int? {
        try await client.withConnection { connection in
            let marker = try await connection.rows(
                "SELECT CASE WHEN to_regclass('eventstore.schema_version') IS NULL THEN NULL ELSE 0 END", logger: logger)
            guard try marker.first?.decode(Int?.self) != nil else { return nil }
            let versions = try await connection.rows("SELECT version FROM eventstore.schema_version", logger: logger)
            return try versions.first.map { Int(try $0.decode(Int32.self)) }
        }
    }
}
