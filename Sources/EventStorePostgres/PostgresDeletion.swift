import EventStoreCore
import Foundation
import Logging
import PostgresNIO

extension PostgresEventStore {
    /// Deletes a stream's events as `EventStore.deleteStream(_:expectedVersion:hard:)` does, in
    /// one transaction that holds the tables' lock, then the head row's (as an append with table
    /// writes does): rows, snapshots naming the stream, the stream's state, the counters, and the
    /// `$StreamDeleted` event through the append function.
    public func deleteStream(_ stream: String, expectedVersion: ExpectedVersion = .any, hard: Bool = false) async throws
        -> StreamDeletion
    {
        try checkDeletable()
        try StreamMaintenance.validate(stream)
        let deletions = try await maintain { [self] connection, logger, now in
            guard let state = try await Self.streamState(stream, connection, logger, locking: true) else {
                guard expectedVersion.isSatisfied(by: 0) else {
                    throw EventStoreError.versionConflict([VersionConflict(stream: stream, expected: expectedVersion, actual: 0)])
                }
                throw EventStoreError(.notFound, "The stream '\(stream)' has no events; there is nothing to delete.")
            }
            guard expectedVersion.isSatisfied(by: state.version) else {
                throw EventStoreError.versionConflict([VersionConflict(stream: stream, expected: expectedVersion, actual: state.version)])
            }
            if state.isTombstoned { throw EventStoreError.tombstoned(stream) }
            if state.first > state.version && !hard { throw StreamMaintenance.nothingToDelete(stream) }
            return [
                try await remove(
                    stream: stream, state: state, before: state.version &+ 1, hard: hard, reason: StreamDeletion.delete, now: now,
                    connection, logger)
            ]
        }
        guard let deletion = deletions.first else {
            throw EventStoreError(.storageFailure, "The deletion of '\(stream)' committed without its record; run `esctl verify`.")
        }
        return deletion
    }

    /// Sets a stream's retention policy; see `EventStore.setRetention(_:for:)`.
    public func setRetention(_ policy: RetentionPolicy, for stream: String) async throws {
        try checkDeletable()
        try StreamMaintenance.validate(stream)
        try policy.validate()
        _ = try await maintain { connection, logger, _ in
            guard let state = try await Self.streamState(stream, connection, logger, locking: true) else {
                throw EventStoreError(.notFound, "The stream '\(stream)' has no events; append to it before giving it a retention policy.")
            }
            if state.isTombstoned { throw EventStoreError.tombstoned(stream) }
            let (count, age, before) = policy.stored
            try await connection.statement(
                """
                UPDATE eventstore.streams SET max_count = NULLIF(\(Int64(clamping: count)), 0),
                    max_age_micros = NULLIF(\(Int64(clamping: age)), 0), truncate_before = NULLIF(\(Int64(clamping: before)), 0)
                WHERE name = \(stream)
                """, logger: logger)
            return []
        }
    }

    /// Applies every stream's retention policy now, in one transaction; see `EventStore.purge()`.
    public func purge() async throws -> [StreamDeletion] {
        try checkDeletable()
        return try await maintain { [self] connection, logger, now in
            let names = try await connection.rows(
                """
                SELECT name FROM eventstore.streams
                WHERE max_count IS NOT NULL OR max_age_micros IS NOT NULL OR truncate_before IS NOT NULL ORDER BY name
                """, logger: logger
            ).map { try $0.decode(String.self) }
            var deletions: [StreamDeletion] = []
            for name in names {
                if let deletion = try await applyRetention(name, now: now, connection, logger) { deletions.append(deletion) }
            }
            return deletions
        }
    }

    /// Applies one stream's policy, right after an append to it (see ``Appender``).
    func trimAfterAppend(_ stream: String) async throws -> [StreamDeletion] {
        try await maintain { [self] connection, logger, now in
            try await applyRetention(stream, now: now, connection, logger).map { [$0] } ?? []
        }
    }

    /// What the store knows of `stream`; nil when it never had an event.
    public func streamInfo(_ stream: String) async throws -> StreamInfo? {
        let logger = configuration.logger
        let schema = databaseSchemaVersion
        return try await reading { connection in
            guard schema >= 4 else {
                let rows = try await connection.statement("SELECT version FROM eventstore.streams WHERE name = \(stream)", logger: logger)
                for try await version in rows.decode(Int64.self) {
                    return StreamInfo(stream: stream, version: UInt64(max(version, 0)), firstVersion: 1, isTombstoned: false, retention: nil)
                }
                return nil
            }
            let rows = try await connection.statement(Self.stateQuery(stream, locking: false), logger: logger)
            for try await row in rows.decode(StateRow.self) { return Self.state(row).info(stream) }
            return nil
        }
    }

    // MARK: The transaction

    private func checkDeletable() throws(EventStoreError) {
        try checkWritable()
        if databaseSchemaVersion < 4 {
            throw EventStoreError(.storeUnavailable, "The database's schema is older than this program's; open it for writing to upgrade it first.")
        }
    }

    /// Runs `body` in a write transaction holding the tables' lock, then the head row's, with the
    /// writer's clock; publishes the new head after the commit.
    private func maintain(
        _ body: (PostgresConnection, Logger, Int64) async throws -> [StreamDeletion]
    ) async throws -> [StreamDeletion] {
        let now = ContentTime.microseconds(configuration.clock())
        let location = location
        let deletions = try await inTransaction(.write) { connection, logger in
            do {
                try await connection.statement("SELECT position FROM eventstore.head FOR UPDATE", logger: logger)
                return try await body(connection, logger, now)
            } catch {
                throw PostgresErrors.mapped(error, location: location)
            }
        }
        appender.countCommittedWrite()
        if let head = deletions.map(\.position).max() { headSignal.publish(head) }
        return deletions
    }

    private func applyRetention(_ stream: String, now: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> StreamDeletion?
    {
        guard let state = try await Self.streamState(stream, connection, logger, locking: true), let policy = state.retention else {
            return nil
        }
        var (keep, cutoff) = policy.firstKeptByCount(version: state.version, first: state.first, now: now)
        if let cutoff {
            let rows = try await connection.rows(
                """
                SELECT coalesce(min(version), \(Int64(clamping: state.version &+ 1))) FROM eventstore.events
                WHERE stream = \(stream) AND version >= \(Int64(clamping: keep)) AND recorded_at >= \(cutoff)
                """, logger: logger)
            let byAge = try rows.first.map { UInt64(max(try $0.decode(Int64.self), 0)) } ?? (state.version &+ 1)
            keep = RetentionPolicy.firstKept(version: state.version, byCount: keep, byAge: byAge)
        }
        guard keep > state.first else { return nil }
        return try await remove(stream: stream, state: state, before: keep, hard: false, reason: StreamDeletion.retention, now: now, connection, logger)
    }

    /// Removes versions `state.first ..< before` of `stream` and the snapshots that name it,
    /// keeps their ids, counts them, and appends the `$StreamDeleted` event.
    private func remove(
        stream: String, state: StreamState, before: UInt64, hard: Bool, reason: String, now: Int64,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> StreamDeletion {
        let through = min(before, state.version &+ 1) &- 1
        let removedRows = try await connection.rows(
            """
            WITH gone AS (
                DELETE FROM eventstore.events WHERE stream = \(stream) AND version < \(Int64(clamping: through &+ 1))
                RETURNING id, position, type),
            kept AS (INSERT INTO eventstore.deleted_ids (id, position, stream) SELECT id, position, \(stream) FROM gone)
            SELECT count(*), coalesce(array_agg(DISTINCT type), '{}') FROM gone
            """, logger: logger)
        let (removed, typeList) = try removedRows.first?.decode((Int64, [String]).self) ?? (Int64(0), [String]())
        let types = typeList.sorted()
        let newFirst = max(state.first, through &+ 1)
        try await connection.statement(
            """
            UPDATE eventstore.streams SET first_version = \(Int64(clamping: newFirst)), tombstoned = tombstoned OR \(hard)
            WHERE name = \(stream)
            """, logger: logger)
        if removed > 0 || hard {
            // A snapshot folded from removed events goes with them (one pass over the snapshot rows).
            try await connection.statement(
                """
                DELETE FROM eventstore.tables WHERE name = '$snapshots'
                    AND position(\(ByteBuffer(bytes: [0] + Array(stream.utf8) + [0])) IN key) > 0
                """, logger: logger)
        }
        if removed > 0 {
            let trims: Int64 = reason == StreamDeletion.retention ? 1 : 0
            try await connection.statement("UPDATE eventstore.head SET deleted = deleted + \(removed)", logger: logger)
            try await connection.statement(
                """
                INSERT INTO eventstore.deleted_types (type, deletions, trims) SELECT t, 1, \(trims) FROM unnest(\([""] + types)) AS t
                ON CONFLICT (type) DO UPDATE SET deletions = eventstore.deleted_types.deletions + 1,
                    trims = eventstore.deleted_types.trims + excluded.trims
                """, logger: logger)
        }
        var deletion = StreamDeletion(
            stream: stream, fromVersion: state.first, toVersion: through, hard: hard, reason: reason, types: types)
        let event = NewEvent(type: StreamDeletion.eventType, data: deletion.eventData)
        let request = AppendRequest(
            appends: [StreamAppend(stream: StreamDeletion.systemStream, events: [event])], ids: [[configuration.idGenerator()]],
            tracking: nil)
        let call = AppendCall([request], now: now)
        let rows = try await connection.rows(call.query, logger: logger).map { try $0.decode(AppendCall.Row.self) }
        guard let results = try call.outcomes(rows).first?.get(), let position = results.first?.positions.first else {
            throw EventStoreError(.storageFailure, "The append function did not record the deletion of '\(stream)'.")
        }
        deletion.position = position
        return deletion
    }

    // MARK: A stream's state

    /// A stream's row: version, first version, tombstone, policy.
    struct StreamState {
        let version: UInt64
        let first: UInt64
        let isTombstoned: Bool
        let retention: RetentionPolicy?

        func info(_ stream: String) -> StreamInfo {
            StreamInfo(stream: stream, version: version, firstVersion: first, isTombstoned: isTombstoned, retention: retention)
        }
    }

    typealias StateRow = (Int64, Int64, Bool, Int64?, Int64?, Int64?)

    private static func stateQuery(_ stream: String, locking: Bool) -> PostgresQuery {
        var query: PostgresQuery = """
            SELECT version, first_version, tombstoned, max_count, max_age_micros, truncate_before
            FROM eventstore.streams WHERE name = \(stream)
            """
        if locking { query.sql += " FOR UPDATE" }
        return query
    }

    private static func state(_ row: StateRow) -> StreamState {
        func stored(_ value: Int64?) -> UInt64 { UInt64(max(value ?? 0, 0)) }
        return StreamState(
            version: UInt64(max(row.0, 0)), first: UInt64(max(row.1, 1)), isTombstoned: row.2,
            retention: RetentionPolicy(stored: stored(row.3), stored(row.4), stored(row.5)))
    }

    private static func streamState(_ stream: String, _ connection: PostgresConnection, _ logger: Logger, locking: Bool) async throws
        -> StreamState?
    {
        let rows = try await connection.rows(stateQuery(stream, locking: locking), logger: logger)
        return try rows.first.map { state(try $0.decode(StateRow.self)) }
    }
}
