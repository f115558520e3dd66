import EventStoreCore
import Logging
import PostgresNIO

extension PostgresEventStore {
    /// How a transaction begins: a repeatable-read snapshot for reads; for writes, a transaction
    /// that first takes the tables' advisory lock, so table writes (and deletions) of every
    /// process run one at a time, as LMDB's single writer runs them.
    enum TransactionKind {
        case read, write

        var statements: [String] {
            switch self {
            case .read: ["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"]
            case .write: ["BEGIN", "SELECT pg_advisory_xact_lock(\(PostgresSchema.tablesLockKey))"]
            }
        }
    }

    /// Runs `body` in a transaction of `kind` on a connection of the pool, never blocking a
    /// thread: commits when `body` returns, rolls back when it throws, and rethrows its error as
    /// it was thrown. A connection whose rollback or commit failed is closed, so the pool never
    /// lends a connection left inside a transaction. The driver's own errors come back as
    /// ``EventStoreError``s (see ``PostgresErrors``).
    func inTransaction<R: Sendable>(
        _ kind: TransactionKind, _ body: (PostgresConnection, Logger) async throws -> R
    ) async throws -> R {
        try checkOpen()
        // A write from inside a table closure would wait for the tables' lock its own
        // transaction holds.
        if kind == .write { try TableClosure.checkOutside("a write") }
        let logger = configuration.logger
        // The caller's error, told apart from the driver's (which are mapped).
        var callerError: (any Error)?
        do {
            return try await inFlight.run { try await pool.withConnection { connection in
                do {
                    for statement in kind.statements { try await connection.statement(PostgresQuery(unsafeSQL: statement), logger: logger) }
                } catch {
                    // Whether BEGIN ran or not, the connection's state is unknown: it goes.
                    try? await connection.close()
                    throw error
                }
                let result: R
                do {
                    result = try await body(connection, logger)
                } catch {
                    callerError = error
                    do {
                        try await connection.statement("ROLLBACK", logger: logger)
                    } catch {
                        try? await connection.close()
                    }
                    throw error
                }
                do {
                    try await connection.statement("COMMIT", logger: logger)
                } catch {
                    try? await connection.close()
                    throw error
                }
                return result
            } }
        } catch {
            if let callerError { throw callerError }
            throw PostgresErrors.mapped(error, location: location)
        }
    }
}

extension PostgresConnection {
    /// Runs `query` and collects its rows (for statements whose few rows are read at once).
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await statement(query, logger: logger).collect()
    }

    /// Runs `query` as `query(_:logger:)` does, but first fails with ``ConnectionClosed`` when
    /// the connection is already closed (the server ended it: a failover's `57P01`), and fails
    /// with ``ClosedUnderStatement`` when it closes and the answer never comes
    /// (``StatementWatch``). The driver writes a statement to a closed connection without a
    /// word and its answer never comes: a rebuild whose read transaction lost its connection
    /// between two statements waited for good. Every statement this backend sends goes through here.
    @discardableResult
    func statement(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        guard !isClosed else { throw ConnectionClosed() }
        return try await StatementWatch.shared.run(query, on: self, logger: logger)
    }
}

/// A statement not sent because its connection was already closed (``PostgresConnection/statement(_:logger:)``):
/// a failover's failure, and the statement never ran.
struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the connection to PostgreSQL was closed before the statement was sent" }
}
