import EventStoreCore
import Foundation
import PostgresNIO

extension PostgresEventStore {
    /// Opens the named tables, creating those that do not exist yet (rows of
    /// `eventstore.table_names`). In a store opened read-only nothing is created: a table that
    /// does not exist reads as empty. Throws `EventStoreError.Code.invalidInput` for a bad name.
    public func openTables(_ names: [String]) async throws {
        for name in names { try Limits.validateName(name, kind: "table") }
        let missing = openedTables.missing(names)
        guard !missing.isEmpty else { return }
        if mode != .readOnly {
            _ = try await withConnection { connection in
                try await connection.statement(
                    "INSERT INTO eventstore.table_names (name) SELECT unnest(\(missing)) ON CONFLICT (name) DO NOTHING",
                    logger: configuration.logger)
            }
            appender.countCommittedWrite()
        }
        openedTables.insert(missing)
    }

    /// Which of the named tables exist in the store, without creating any.
    public func existingTables(_ names: [String]) async throws -> [String] {
        try await reading { connection in
            let rows = try await connection.statement(
                "SELECT name FROM eventstore.table_names WHERE name = ANY(\(names))", logger: configuration.logger)
            var found = Set<String>()
            for try await name in rows.decode(String.self) { found.insert(name) }
            return names.filter(found.contains)
        }
    }

    /// Runs `body` in one repeatable-read snapshot of the tables and the log, on a connection of
    /// the pool; each of its operations is a round trip that holds no thread. The caller's own
    /// errors come back as they were thrown.
    public func readTables<T: Sendable>(_ body: (TableTransaction) async throws -> T) async throws -> T {
        try await inTransaction(.read) { connection, logger in
            let transaction = TableTransaction(storage: tables(connection, logger), isWritable: false, upcasting: upcasting)
            defer { transaction.end() }
            return try await TableClosure.$isRunning.withValue(true) { try await body(transaction) }
        }
    }

    /// Runs `body` in a write transaction that first takes the tables' advisory lock, so that
    /// table writes of every process run one at a time (as under LMDB's single writer): all it
    /// writes commits together, or nothing when it throws (its error is rethrown as it was).
    public func writeTables<T: Sendable>(_ body: @escaping @Sendable (TableTransaction) async throws -> T) async throws -> T {
        try checkWritable()
        let result = try await inTransaction(.write) { connection, logger in
            let transaction = TableTransaction(storage: tables(connection, logger), isWritable: true, upcasting: upcasting)
            defer { transaction.end() }
            return try await TableClosure.$isRunning.withValue(true) { try await body(transaction) }
        }
        appender.countCommittedWrite()
        return result
    }

    /// Appends as ``append(_:)`` does and, in the same transaction, once the events are newly
    /// written, runs `body` with the tables and the results; see `EventStore.append(_:alsoWriting:)`.
    /// Not grouped with other appends: it runs in a transaction of its own that holds the tables'
    /// lock, then the head row's, to commit.
    public func append(
        _ appends: [StreamAppend], alsoWriting body: @escaping @Sendable (TableTransaction, [AppendResult]) async throws -> Void
    ) async throws -> [AppendResult] {
        try checkWritable()
        try Limits.validate(appends)
        let appends = try await sealingPersonalData(appends)
        let first = AppendCall([request(appends, tracking: nil)], now: ContentTime.microseconds(configuration.clock()))
        let started = ContinuousClock.now
        let (results, trims) = try await retryingAfterFailover(first) { call in
            try await inTransaction(.write) { connection, logger -> ([AppendResult], Set<String>) in
                let (results, trims, wrote) = try await call.singleOutcome(try await appendRows(call, connection, logger), connection, logger)
                // Made again after a failover, an append whose first try committed (and ran
                // `body` then) writes nothing now, and runs nothing more.
                if wrote {
                    let transaction = TableTransaction(storage: tables(connection, logger), isWritable: true, upcasting: upcasting)
                    defer { transaction.end() }
                    try await TableClosure.$isRunning.withValue(true) { try await body(transaction, results) }
                }
                return (results, trims)
            }
        }
        return await appendedAlone(results, trimming: trims, started: started)
    }

    /// Appends on a condition in a transaction of its own (not grouped with other appends) that
    /// holds the tables' lock, then the head row's, to commit: checks `condition` under that
    /// lock, so that no append of any process commits between the check and the write, then
    /// calls the append function.
    func append(_ appends: [StreamAppend], checking condition: AppendCondition, tracking: TrackingPosition? = nil) async throws -> [AppendResult] {
        try checkWritable()
        try Limits.validate(appends)
        try condition.failIfEventsMatch.validate()
        let appends = try await sealingPersonalData(appends)
        let first = AppendCall([request(appends, tracking: tracking)], now: ContentTime.microseconds(configuration.clock()))
        let started = ContinuousClock.now
        let (results, trims) = try await retryingAfterFailover(first) { call in
            try await inTransaction(.write) { connection, logger in
                try await ConditionCheck.check(condition, lookingUp: call.lookedUpIDs, connection, logger)
                let (results, trims, _) = try await call.singleOutcome(try await appendRows(call, connection, logger), connection, logger)
                return (results, trims)
            }
        }
        return await appendedAlone(results, trimming: trims, started: started)
    }

    /// Runs an append made alone (`attempt`, its own transaction), and again after a failover
    /// (``AppendRetry``).
    private func retryingAfterFailover<R>(_ first: AppendCall, _ attempt: (AppendCall) async throws -> R) async throws -> R {
        try await AppendRetry.run(first, on: pool, logger: configuration.logger, isClosing: { closed }, attempt)
    }

    /// The append function's rows for `call`, its driver's errors mapped.
    private func appendRows(_ call: AppendCall, _ connection: PostgresConnection, _ logger: Logger) async throws -> [PostgresRow] {
        do {
            return try await connection.rows(call.query, logger: logger)
        } catch {
            throw Appender.mapped(error)
        }
    }

    /// What follows an append made alone: streams with a retention policy lose what they no
    /// longer keep (and the snapshot just written with it) before the append returns, as grouped
    /// appends do (see ``Appender``); the commit is counted; the new head is published.
    private func appendedAlone(_ results: [AppendResult], trimming trims: Set<String>, started: ContinuousClock.Instant) async
        -> [AppendResult]
    {
        for stream in trims.sorted() {
            do {
                _ = try await trimAfterAppend(stream)
            } catch {
                configuration.logger.warning("applying a stream's retention policy failed", metadata: ["stream": "\(stream)", "reason": "\(error)"])
            }
        }
        appender.countCommittedWrite()
        // Counted as the grouped appends are: one append, its new events, its commit's time.
        let written = results.reduce(0) { $0 + ($1.alreadyRecorded ? 0 : $1.positions.count) }
        metrics.committed(appends: 1, events: written, duration: ContinuousClock.now - started)
        if let head = results.compactMap({ $0.alreadyRecorded ? nil : $0.positions.last }).max() { headSignal.publish(head) }
        return results
    }

    /// Waits until the log's head is past `position` (committed by any process) and returns it.
    public func waitForCommit(after position: UInt64) async throws -> UInt64 {
        while true {
            try await refreshHead()
            let current = headSignal.current
            if current > position { return current }
            _ = try await headSignal.wait(after: position)
        }
    }

    private func tables(_ connection: PostgresConnection, _ logger: Logger) -> PostgresTables {
        let opened = openedTables
        return PostgresTables(
            connection: connection, logger: logger, location: location, eventColumns: eventColumns,
            hasDeletions: databaseSchemaVersion >= 4, clock: configuration.clock, isOpen: { name in opened.contains(name) })
    }
}
