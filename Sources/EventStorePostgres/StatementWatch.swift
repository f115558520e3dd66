import EventStoreCore
import Logging
import PostgresNIO
import Synchronization

/// Ends the statements that their connection's close left without an answer.
///
/// Why: postgres-nio writes a statement to its channel from the caller's thread, which hops to
/// the connection's event loop. When the connection's close is already queued there (a
/// failover's `57P01`, a pool shutting down, a connection given up), the statement's write
/// comes after the close, is dropped without a word, and its answer never comes: the caller
/// waits for good. ``PostgresConnection/statement(_:logger:)``'s check of `isClosed` cannot
/// close that window, as the close may not have run yet when it looks (a long failover run
/// once left a rebuild waiting so for more than ten minutes).
///
/// So each statement runs in a task of its own while its caller waits for the first of its
/// answer or this watch's verdict. Every ``interval`` the watch looks at the connections of
/// the statements under way; a statement whose connection it finds closed twice in a row (so
/// long after the driver fails the statements it did take) fails with ``ClosedUnderStatement``.
/// The dropped statement's own task never ends: a few small objects for each such race, which
/// needs a close and a statement within the same moment.
final class StatementWatch: Sendable {
    /// The watch every connection of this process uses.
    static let shared = StatementWatch(interval: .milliseconds(500))

    /// How often the connections of the statements under way are looked at.
    let interval: Duration

    private struct Pending {
        let connection: PostgresConnection
        let outcome: FirstOutcome<PostgresRowSequence>
        let logger: Logger
        var seenClosed = false
    }

    private struct State {
        var pending: [UInt64: Pending] = [:]
        var nextKey: UInt64 = 0
        /// The task that looks, while statements are under way; nil once none are.
        var watcher: Task<Void, Never>?
    }

    private let state = Mutex(State())

    init(interval: Duration) {
        self.interval = interval
    }

    /// Runs `query` on `connection` and returns the driver's answer, or fails with
    /// ``ClosedUnderStatement`` when the connection closed and the answer never came. Throws
    /// what the driver threw.
    func run(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws -> PostgresRowSequence {
        let outcome = FirstOutcome<PostgresRowSequence>()
        let key = watch(connection, outcome, logger)
        defer { state.withLock { _ = $0.pending.removeValue(forKey: key) } }
        Task {
            do {
                outcome.finish(.success(try await connection.query(query, logger: logger)))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        return try await withCheckedThrowingContinuation { outcome.wait($0) }
    }

    /// How many statements are under way (for tests).
    var underWay: Int { state.withLock { $0.pending.count } }

    /// Records a statement under way, and starts the task that looks if none runs.
    private func watch(_ connection: PostgresConnection, _ outcome: FirstOutcome<PostgresRowSequence>, _ logger: Logger) -> UInt64 {
        state.withLock { state in
            let key = state.nextKey
            state.nextKey &+= 1
            state.pending[key] = Pending(connection: connection, outcome: outcome, logger: logger)
            if state.watcher == nil { state.watcher = Task { await self.look() } }
            return key
        }
    }

    /// Looks every ``interval`` until no statement is under way.
    private func look() async {
        while true {
            try? await Task.sleep(for: interval)
            let ended = state.withLock { state -> [Pending]? in
                guard !state.pending.isEmpty else {
                    state.watcher = nil
                    return nil
                }
                var ended: [Pending] = []
                for (key, pending) in state.pending where pending.connection.isClosed {
                    if pending.seenClosed {
                        ended.append(pending)
                        state.pending[key] = nil
                    } else {
                        state.pending[key]?.seenClosed = true
                    }
                }
                return ended
            }
            guard let ended else { return }
            for pending in ended where pending.outcome.finish(.failure(ClosedUnderStatement())) {
                pending.logger.notice("a statement's connection closed and its answer never came; the statement fails")
            }
        }
    }
}

/// A statement whose connection closed while it waited, and whose answer never came
/// (``StatementWatch``): a failover's failure, and, as the statement may have been sent, one
/// whose outcome is unknown.
struct ClosedUnderStatement: Error, CustomStringConvertible {
    var description: String { "the connection to PostgreSQL closed and the statement got no answer" }
}
