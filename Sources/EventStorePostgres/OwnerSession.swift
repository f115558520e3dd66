import EventStoreCore
import Logging
import PostgresNIO
import Synchronization

/// What names a handle to every other handle of the store, on any host (``LogOwnership/ownerID``):
/// a connection of its own that holds a session advisory lock on (``lockClass``, id) while the
/// handle is open. Another handle knows the owner is alive by finding that lock granted in
/// `pg_locks`; when the owner's process dies or loses its host, PostgreSQL ends the session and
/// the lock with it. A dropped connection is made again, and takes the same lock again, after
/// a pause on the injected clock.
final class OwnerSession: Sendable {
    /// The first key of every owner lock ("esow"); the second is the owner's id.
    static let lockClass: Int32 = 0x6573_6f77

    /// This handle's owner id, from 1 through `Int32.max`.
    let id: Int64

    /// The connection holding the lock, and whether ``close()`` was called: a connection made
    /// again after that is closed at once instead of being kept (it would hold the lock of a
    /// closed handle).
    private struct State {
        var connection: PostgresConnection
        var isClosed = false
    }

    private let state: Mutex<State>
    private let keeper: Mutex<Task<Void, Never>?> = Mutex(nil)

    /// Connects to `location` and takes a free id. Throws ``EventStoreError/Code/storeUnavailable``
    /// when the server cannot be reached or refuses the login (within the connect timeout): the
    /// first thing a store does when it opens, so that an unreachable server is said at once.
    static func open(
        _ location: PostgresLocation, logger: Logger, retryEvery pause: Duration, on clock: any Clock<Duration>
    ) async throws -> OwnerSession {
        let connection = try await connect(location, logger: logger, on: clock)
        do {
            // Another live handle holding an id refuses it: draw again.
            for _ in 0..<16 {
                let id = Int64.random(in: 1...Int64(Int32.max))
                if try await lock(id, on: connection, logger: logger) {
                    let session = OwnerSession(id: id, connection: connection)
                    session.keep(location, logger: logger, retryEvery: pause, on: clock)
                    return session
                }
            }
            throw EventStoreError(.storageFailure, "No free owner id was found in 16 draws in \(location).")
        } catch {
            try? await connection.close()
            throw PostgresErrors.mapped(error, location: location.description)
        }
    }

    /// The pauses between the attempts to connect to a server that refuses for now.
    static let connectPauses: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600)]

    /// Connects to `location`; a server that refuses for now (too many connections, starting up,
    /// shutting down) is tried again after each of ``connectPauses`` on `clock` (3.1 s in all),
    /// then reported. Throws ``EventStoreError/Code/storeUnavailable`` when the server cannot be
    /// reached, refuses the login, or still refuses after the last attempt.
    static func connect(_ location: PostgresLocation, logger: Logger, on clock: any Clock<Duration>) async throws -> PostgresConnection {
        var attempt = 0
        while true {
            do {
                return try await PostgresConnection.connect(configuration: location.connectionConfiguration, id: 0, logger: logger)
            } catch {
                guard let state = PostgresErrors.sqlState(of: error), PostgresErrors.refusalsForNow.contains(state) else {
                    throw PostgresErrors.mapped(error, location: location.description)
                }
                guard attempt < connectPauses.count else {
                    let mapped = PostgresErrors.mapped(error, location: location.description)
                    let waited = connectPauses.reduce(Int64(0)) { $0 + $1.components.seconds * 1000 + $1.components.attoseconds / 1_000_000_000_000_000 }
                    throw EventStoreError(
                        .storeUnavailable,
                        "PostgreSQL at \(location) refused \(attempt + 1) connections over \(waited / 1000).\(waited % 1000 / 100) s (\(mapped.cause?.description ?? state)); try again later, or let it take more connections (max_connections).",
                        cause: mapped.cause)
                }
                logger.notice(
                    "PostgreSQL refused a connection for now; trying again",
                    metadata: ["reason": "\(error)", "attempt": "\(attempt + 1)"])
                try await clock.sleep(for: connectPauses[attempt])
                attempt += 1
            }
        }
    }

    private init(id: Int64, connection: PostgresConnection) {
        self.id = id
        self.state = Mutex(State(connection: connection))
    }

    /// Takes the owner lock of `id` on `connection` if no other session holds it.
    private static func lock(_ id: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query("SELECT pg_try_advisory_lock(\(lockClass), \(Int32(clamping: id)))", logger: logger)
        for try await taken in rows.decode(Bool.self) { return taken }
        return false
    }

    /// Watches the connection; when it closes under the handle, connects again and takes the
    /// same lock, until ``close()``.
    private func keep(_ location: PostgresLocation, logger: Logger, retryEvery pause: Duration, on clock: any Clock<Duration>) {
        let task = Task { [self] in
            while !Task.isCancelled {
                let current = state.withLock { $0.connection }
                try? await current.closeFuture.get()
                guard !Task.isCancelled else { return }
                logger.notice("the connection that holds this handle's owner lock dropped; connecting again", metadata: ["owner": "\(id)"])
                do {
                    try await clock.sleep(for: max(pause, .milliseconds(100)))
                    let fresh = try await Self.connect(location, logger: logger, on: clock)
                    guard try await Self.lock(id, on: fresh, logger: logger) else {
                        // Taken by another session meanwhile (an id drawn again): this handle's
                        // work then reads as its owner's, which is alive; nothing better to do.
                        logger.warning("this handle's owner id was taken by another session while disconnected", metadata: ["owner": "\(id)"])
                        try? await fresh.close()
                        return
                    }
                    let kept = state.withLock { state -> Bool in
                        guard !state.isClosed else { return false }
                        state.connection = fresh
                        return true
                    }
                    guard kept else {
                        try? await fresh.close()
                        return
                    }
                } catch {
                    continue
                }
            }
        }
        keeper.withLock { $0 = task }
    }

    /// Whether the owner `id` holds its lock in this database, asked through `client`.
    static func isAlive(_ id: Int64, client: PostgresClient) async throws -> Bool {
        guard id > 0, id <= Int64(Int32.max) else { return false }
        let rows = try await client.query(
            """
            SELECT count(*) FROM pg_locks
            WHERE locktype = 'advisory' AND granted AND objsubid = 2
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND classid::bigint = \(Int64(lockClass)) AND objid::bigint = \(id)
            """)
        for try await count in rows.decode(Int64.self) { return count > 0 }
        return false
    }

    /// Stops watching and closes the connection, which releases the lock.
    func close() {
        keeper.withLock { $0?.cancel() }
        let current = state.withLock { state in
            state.isClosed = true
            return state.connection
        }
        Task { try? await current.close() }
    }
}
