import EventStoreCore
import PostgresNIO

/// Turns postgres-nio's errors into the store's: unreachable servers and refused logins are
/// ``EventStoreError/Code/storeUnavailable``, a store-breaking constraint is
/// ``EventStoreError/Code/damaged``, anything else ``EventStoreError/Code/storageFailure``, each
/// with PostgreSQL's SQLSTATE as the cause when the server sent one.
enum PostgresErrors {
    /// The SQLSTATEs of a server that refuses a connection for now: too many connections
    /// (`53300`), starting up or shutting down (`57P03`). A connection is tried again on them.
    static let refusalsForNow: Set<String> = ["53300", "57P03"]

    /// The SQLSTATE the server sent with `error`, if any.
    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// What went wrong with a connection, in words: the underlying error, or the code when that
    /// is itself a PSQLError (whose description hides everything).
    private static func reason(_ error: PSQLError) -> String {
        guard let underlying = error.underlying else { return "\(error.code)" }
        if let inner = underlying as? PSQLError { return "\(error.code) (\(inner.code))" }
        return "\(underlying)"
    }

    static func mapped(_ error: any Error, location: String) -> EventStoreError {
        if let error = error as? EventStoreError { return error }
        if error is CancellationError { return EventStoreError(.closed, "The operation was cancelled.") }
        // The pool's own errors (its module is underscored, so they are told by name): after a
        // minute of failed connects with no connection left, it fails every waiting call (its
        // circuit breaker); a lease whose task was cancelled ends as a cancellation does; once
        // shut down, it refuses leases.
        let described = String(describing: error)
        if described.hasPrefix("ConnectionPoolError") {
            if described.contains("CircuitBreakerTripped") {
                return EventStoreError(
                    .storeUnavailable,
                    "Cannot reach PostgreSQL at \(location): no connection could be made for a minute; check that the server runs and takes connections.")
            }
            if described.contains("requestCancelled") { return EventStoreError(.closed, "The operation was cancelled.") }
            return EventStoreError(.closed, "The store's connections to PostgreSQL at \(location) are closed.")
        }
        if error is PoolSwitch.NoAnswer {
            return EventStoreError(.storeUnavailable, "PostgreSQL at \(location) did not answer (\(error)); try again.")
        }
        if error is ConnectionClosed || error is ClosedUnderStatement {
            return EventStoreError(.storeUnavailable, "The connection to PostgreSQL at \(location) was lost (\(error)); try again.")
        }
        guard let error = error as? PSQLError else {
            return EventStoreError(.storageFailure, "PostgreSQL at \(location) failed: \(error).")
        }
        if let info = error.serverInfo, let state = info[.sqlState] {
            let message = info[.message] ?? "no message"
            let cause = EventStoreError.Cause.database(code: state, description: message)
            switch state {
            case "28000", "28P01", "3D000", "42501":
                // Authentication, a missing database, a missing privilege.
                return EventStoreError(.storeUnavailable, "PostgreSQL at \(location) refused: \(message).", cause: cause)
            case "53100":
                return EventStoreError(.storageFull, "PostgreSQL at \(location) is out of disk space: \(message).", cause: cause)
            case "53300", "57P03":
                // Too many connections; a server starting up or shutting down.
                return EventStoreError(
                    .storeUnavailable, "PostgreSQL at \(location) refused a connection: \(message); try again later.", cause: cause)
            case "57P01", "57P02":
                // The server shut down (a fast stop, a switchover) or crashed under the session.
                return EventStoreError(
                    .storeUnavailable, "PostgreSQL at \(location) ended the connection: \(message); try again.", cause: cause)
            case _ where state.hasPrefix("08"):
                return EventStoreError(.storeUnavailable, "PostgreSQL at \(location) lost the connection: \(message).", cause: cause)
            case "25006":
                return EventStoreError(
                    .storeUnavailable, "PostgreSQL at \(location) is read-only (a standby?): \(message); write to the primary.",
                    cause: cause)
            default:
                return EventStoreError(.storageFailure, "PostgreSQL at \(location) failed: \(message).", cause: cause)
            }
        }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return EventStoreError(
                .storeUnavailable,
                "Cannot reach PostgreSQL at \(location): \(Self.reason(error)); check that the server runs and the URL.")
        default:
            return EventStoreError(.storageFailure, "PostgreSQL at \(location) failed: \(error.code).")
        }
    }
}
