import EventStoreCore
import Logging
import PostgresNIO
import Synchronization

/// Reads that hand out only what a failover keeps, and that go on through one.
///
/// PostgreSQL makes a commit visible to other sessions only once its synchronous standby has it,
/// except when the commit's wait for the standby is cut short: a primary whose postmaster died
/// (a backend in that wait sees it, and ends) or a cancelled wait. The transaction then stays
/// committed on the primary alone, and visible there until the primary is gone; a failover to
/// the standby loses it. A subscriber of the long failover run saw such events, at positions the
/// failover then gave to others. So a read that saw positions not yet known to be on the
/// standby runs a barrier (``replicationBarrier``) on the same connection before it answers: a
/// commit that writes WAL after everything the read could see, and so waits, as an append's
/// commit does, for the synchronous standby to hold all of it. Where no synchronous standby is
/// asked for (`synchronous_standby_names` empty, `synchronous_commit` off or local, or the
/// server a standby itself), the barrier writes nothing and only says so.
extension PostgresEventStore {
    /// How many times a read is made again after a failure a failover explains.
    static let readRetries = 3

    /// The barrier: with a synchronous standby asked for, a transactional logical-decoding
    /// message (any role may emit one; it writes a WAL record and takes a transaction id, so
    /// the statement's commit waits for the standby); otherwise nothing.
    static let replicationBarrier: PostgresQuery = """
        SELECT CASE WHEN NOT pg_is_in_recovery() AND current_setting('synchronous_standby_names') <> ''
            AND current_setting('synchronous_commit') NOT IN ('off', 'local')
        THEN pg_logical_emit_message(true, 'eventstore.replicated', '') IS NOT NULL ELSE false END
        """

    /// Runs `read` (statements that only read, so that making it again is harmless) on a
    /// connection of the pool, and answers what it returned once the server's synchronous
    /// standby holds everything it saw: when `newest` (the newest position `read` could see:
    /// the head of its snapshot, or its newest event) passes what is known to be there
    /// (``ReplicatedPositions``), ``replicationBarrier`` runs on the same connection first,
    /// given up after ``PoolSwitch/answerPatience`` (a standby gone keeps appends waiting too).
    /// With several servers in the URL, a read that failed as a failover makes reads fail is made
    /// again on the server the pool then finds, ``readRetries`` times at most, each logged.
    /// Throws `read`'s own ``EventStoreError``s, and the driver's errors mapped
    /// (``EventStoreError/Code/storeUnavailable`` for a failover's).
    func reading<R: Sendable>(newest: ((R) -> UInt64)? = nil, _ read: (PostgresConnection) async throws -> R) async throws -> R {
        try checkOpen()
        var retries = 0
        while true {
            do {
                return try await inFlight.run {
                    try await pool.withServerConnection { connection, generation in
                        let result = try await read(connection)
                        if let newest { try await replicated(through: newest(result), on: connection, poolGeneration: generation) }
                        return result
                    }
                }
            } catch {
                guard retries < Self.readRetries, pool.survives(error), !closed else { throw PostgresErrors.mapped(error, location: location) }
                retries += 1
                configuration.logger.notice(
                    "a read failed as a failover makes reads fail; reading again", metadata: ["retry": "\(retries)", "reason": "\(error)"])
            }
        }
    }

    /// Returns once the server of `connection` has its synchronous standby holding every
    /// position through `position` (at once when that is already known), running the barrier
    /// on `connection` otherwise. Throws the driver's errors, or ``PoolSwitch/NoAnswer`` after
    /// ``PoolSwitch/answerPatience`` (the connection then closed).
    private func replicated(through position: UInt64, on connection: PostgresConnection, poolGeneration: Int) async throws {
        guard !replicatedPositions.cover(position, poolGeneration: poolGeneration) else { return }
        let logger = configuration.logger
        _ = try await PoolSwitch.answered(
            within: PoolSwitch.answerPatience, clock: configuration.pollClock, logger: logger,
            metadata: ["store": "\(location)", "waitingFor": "the synchronous standby to hold what a read saw"],
            givingUp: { await connection.closeFully() },
            { try await connection.rows(Self.replicationBarrier, logger: logger) })
        replicatedPositions.note(position, poolGeneration: poolGeneration)
    }
}

/// The positions a handle knows its server's synchronous standby holds: every position through
/// the newest a read saw before a barrier ended (``PostgresEventStore/reading(newest:_:)``),
/// on the server the pool then used. A pool moved to another server starts again from nothing.
final class ReplicatedPositions: Sendable {
    private struct Known {
        var poolGeneration = 0
        var through: UInt64 = 0
    }
    private let known = Mutex(Known())

    /// Whether every position through `position` is known to be on the standby of the server
    /// pool generation `poolGeneration` uses.
    func cover(_ position: UInt64, poolGeneration: Int) -> Bool {
        known.withLock { $0.poolGeneration == poolGeneration && position <= $0.through }
    }

    /// Records that every position through `position` is on the standby of pool generation `poolGeneration`'s server.
    func note(_ position: UInt64, poolGeneration: Int) {
        known.withLock { known in
            if poolGeneration > known.poolGeneration {
                known = Known(poolGeneration: poolGeneration, through: position)
            } else if poolGeneration == known.poolGeneration {
                known.through = max(known.through, position)
            }
        }
    }
}
