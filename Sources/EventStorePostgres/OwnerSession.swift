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

    /// The connection holding the lock, and whether `close()` was called: a connection made
    /// again after that is closed at once instead of being kept (it would hold the lock of a
    /// closed handle).
    private struct State {
        var connection: PostgresConnection
        var isClosed = false
    }

    private let state: Mutex<State>
    private let keeper: Mutex<Task<Void, Never>?> = Mutex(nil)

    /// Connects to the server `pool` uses and takes a free id. Throws ``EventStoreError/Code/storeUnavailable``
    /// when the server cannot be reached or refuses the login (within the connect timeout), or
    /// still refuses for now after ``OwnConnection/refusalPauses``.
    static func open(
        _ pool: PoolSwitch, logger: Logger, retryEvery pause: Duration, on clock: any Clock<Duration>
    ) async throws -> OwnerSession {
        let location = pool.currentLocation
        let connection = try await OwnConnection.connect(location, as: .owner, logger: logger, on: clock)
        do {
            // Another live handle holding an id refuses it: draw again.
            for _ in 0..<16 {
                let id = Int64.random(in: 1...Int64(Int32.max))
                if try await lock(id, on: connection, logger: logger) {
                    let session = OwnerSession(id: id, connection: connection)
                    session.keep(pool, logger: logger, retryEvery: pause, on: clock)
                    return session
                }
            }
            throw EventStoreError(.storageFailure, "No free owner id was found in 16 draws in \(location).")
        } catch {
            try? await connection.close()
            throw PostgresErrors.mapped(error, location: location.description)
        }
    }

    private init(id: Int64, connection: PostgresConnection) {
        self.id = id
        self.state = Mutex(State(connection: connection))
    }

    /// Takes the owner lock of `id` on `connection` if no other session holds it.
    private static func lock(_ id: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.statement("SELECT pg_try_advisory_lock(\(lockClass), \(Int32(clamping: id)))", logger: logger)
        for try await taken in rows.decode(Bool.self) { return taken }
        return false
    }

    /// Watches the connection; when it closes under the handle, connects again (to the server
    /// `pool` uses then: after a failover, the new primary) and takes the same lock, until `close()`.
    private func keep(_ pool: PoolSwitch, logger: Logger, retryEvery pause: Duration, on clock: any Clock<Duration>) {
        let task = Task { [self] in
            while !Task.isCancelled {
                let current = state.withLock { $0.connection }
                try? await current.closeFuture.get()
                guard !Task.isCancelled else { return }
                logger.notice("the connection that holds this handle's owner lock dropped; connecting again", metadata: ["owner": "\(id)"])
                pool.connectionDropped(reason: "the owner session's connection closed")
                do {
                    try await clock.sleep(for: max(pause, .milliseconds(100)))
                    let fresh = try await OwnConnection.connect(pool.currentLocation, as: .owner, logger: logger, on: clock)
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
    static func isAlive(_ id: Int64, client: PoolSwitch, logger: Logger) async throws -> Bool {
        guard id > 0, id <= Int64(Int32.max) else { return false }
        let rows = try await client.rows(
            """
            SELECT count(*) FROM pg_locks
            WHERE locktype = 'advisory' AND granted AND objsubid = 2
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND classid::bigint = \(Int64(lockClass)) AND objid::bigint = \(id)
            """, logger: logger)
        return try (rows.first?.decode(Int64.self) ?? 0) > 0
    }

    /// Stops watching and closes the connection, which releases the lock; returns when both are done.
    func close() async {
        let keeper = keeper.withLock { task -> Task<Void, Never>? in
            task?.cancel()
            return task
        }
        let current = state.withLock { state in
            state.isClosed = true
            return state.connection
        }
        try? await current.close()
        await keeper?.value
    }
}

/// This handle's ``OwnerSession``, taken when something first asks for the owner id (a rebuild
/// that records its owner, a consumer-group member that joins): a short command that records
/// no long-running work never holds its connection. A claim that failed is tried again by the
/// next caller.
final class OwnerClaim: Sendable {
    private struct State {
        var claim: Task<OwnerSession, any Error>?
        var id: Int64?
        var isClosed = false
    }
    private let state = Mutex(State())
    private let take: @Sendable () async throws -> OwnerSession

    /// A claim that takes the session with `take` when first needed.
    init(_ take: @escaping @Sendable () async throws -> OwnerSession) {
        self.take = take
    }

    /// The id of the session, once taken (nil before: no work of this handle records it yet).
    var takenID: Int64? { state.withLock { $0.id } }

    /// The session's id, taking the session first if no call did. Throws what taking it threw
    /// (``EventStoreError/Code/storeUnavailable`` when no connection could be made), or
    /// ``EventStoreError/Code/closed`` after `close()`.
    func id() async throws -> Int64 {
        let claim = try state.withLock { state throws(EventStoreError) -> Task<OwnerSession, any Error> in
            guard !state.isClosed else { throw EventStoreError.closedStore }
            if let claim = state.claim { return claim }
            let claim = Task { try await take() }
            state.claim = claim
            return claim
        }
        do {
            let session = try await claim.value
            try state.withLock { state throws(EventStoreError) in
                // Closed while this caller waited: the session is closed too.
                guard !state.isClosed else { throw EventStoreError.closedStore }
                state.id = session.id
            }
            return session.id
        } catch {
            state.withLock { state in
                if state.claim == claim { state.claim = nil }
            }
            throw error
        }
    }

    /// Refuses later claims, and closes the session if one was taken (a claim under way is
    /// cancelled, or closed once it is made); returns when its connection is closed.
    func close() async {
        let claim = state.withLock { state -> Task<OwnerSession, any Error>? in
            state.isClosed = true
            return state.claim
        }
        guard let claim else { return }
        claim.cancel()
        if let session = try? await claim.value { await session.close() }
    }
}