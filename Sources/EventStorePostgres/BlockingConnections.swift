import EventStoreCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Connections for the synchronous table API (``EventStore/readTables(_:)`` and the closures
/// of writeTables and alsoWriting are synchronous, as folds and deciders are): each call blocks
/// its thread on a future of the connection's event loop, never on a task. Such calls run on the
/// projection runner's fold threads or on ``blockingQueue``, not on the cooperative pool, except
/// `readTables` called from async code, which blocks one of its threads for the round trips.
final class BlockingConnections: Sendable {
    private let idle = Mutex<[PostgresConnection]>([])
    private let nextID = Atomic<Int>(1)
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let location: String
    /// Where the synchronous closures of async calls run, so they never block the cooperative pool.
    let blockingQueue = DispatchQueue(label: "eventstore.postgres.tables", attributes: .concurrent)

    /// At most this many idle connections are kept.
    private static let maximumIdle = 4

    init(location: PostgresLocation, logger: Logger) {
        configuration = location.connectionConfiguration
        self.logger = logger
        self.location = location.description
    }

    /// Runs `body` in a transaction: a repeatable-read snapshot for reads; for writes, a
    /// transaction that first takes the tables' advisory lock, so table writes of every process
    /// run one at a time, as LMDB's single writer runs them. Commits when `body` returns, rolls
    /// back when it throws (and rethrows its error unchanged).
    func withTransaction<R>(writing: Bool, _ body: (PostgresConnection, Logger) throws -> R) throws -> R {
        let connection = try lease()
        var healthy = true
        defer { giveBack(connection, healthy: healthy) }
        do {
            if writing {
                try run(connection, "BEGIN")
                try run(connection, "SELECT pg_advisory_xact_lock(\(PostgresSchema.tablesLockKey))")
            } else {
                try run(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            }
        } catch {
            healthy = false
            throw PostgresErrors.mapped(error, location: location)
        }
        let result: R
        do {
            result = try body(connection, logger)
        } catch {
            do { try run(connection, "ROLLBACK") } catch { healthy = false }
            throw error
        }
        do {
            try run(connection, "COMMIT")
        } catch {
            healthy = false
            throw PostgresErrors.mapped(error, location: location)
        }
        return result
    }

    /// Runs `work` on ``blockingQueue`` and returns what it returns.
    func offload<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            blockingQueue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Closes the idle connections; connections in use close when given back.
    func closeAll() {
        let connections = idle.withLock { idle -> [PostgresConnection] in
            defer { idle.removeAll() }
            return idle
        }
        for connection in connections { try? connection.close().wait() }
    }

    private func run(_ connection: PostgresConnection, _ sql: String) throws {
        _ = try connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).wait()
    }

    private func lease() throws -> PostgresConnection {
        while let connection = idle.withLock({ $0.popLast() }) {
            if !connection.isClosed { return connection }
        }
        let id = nextID.add(1, ordering: .relaxed).newValue
        do {
            return try PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.next(), configuration: configuration, id: id, logger: logger
            ).wait()
        } catch {
            throw PostgresErrors.mapped(error, location: location)
        }
    }

    private func giveBack(_ connection: PostgresConnection, healthy: Bool) {
        guard healthy, !connection.isClosed else {
            try? connection.close().wait()
            return
        }
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < Self.maximumIdle else { return false }
            idle.append(connection)
            return true
        }
        if !kept { try? connection.close().wait() }
    }
}
