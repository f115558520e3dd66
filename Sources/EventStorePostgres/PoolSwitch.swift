import EventStoreCore
import Logging
import PostgresNIO
import Synchronization

/// A handle's pool of connections, on the server of its location that fits its
/// `target_session_attrs` (``ServerLocator``), and made again on another server after a failover.
///
/// With one server and no `target_session_attrs`, it is the pool on that server and nothing
/// more: postgres-nio's pool connects again by itself. With several, a call that fails as a
/// failover makes calls fail (the connection lost, the server now read-only or shutting down),
/// or that waits ``leasePatience`` for a connection, has the servers looked at again: once at a
/// time, the server in use asked first and kept while it fits, with pauses from 0.1 s doubling
/// to 2 s between rounds, at most ``relocationRounds`` rounds. When another server fits, the
/// pool is made on it, the old one is shut down, and a log line says so. After a failure, calls
/// made meanwhile wait for that look (a look for a slow lease lets them go on with the pool in
/// use); a call whose connection was never lent (so whose statement never ran) is made again on
/// the new server; one that ran fails with the error it met
/// (``EventStoreError/Code/storeUnavailable`` once mapped), for its caller to decide.
final class PoolSwitch: Sendable {
    /// The pool in use and the server it is on.
    struct Current: Sendable {
        let client: PostgresClient
        let task: Task<Void, Never>
        /// The server's index in the location's endpoints.
        let server: Int
        /// Counts the pools made, so that a failure is told from one of an older pool.
        let generation: Int
    }

    private struct State {
        var current: Current
        var relocating: Task<Current, any Error>?
        /// Whether calls wait for the look under way: yes after a failure a failover explains;
        /// no when it only checks a pool slow to lend (which keeps serving meanwhile).
        var callsWait = false
        /// The tasks of pools shut down after a move, which `close()` waits for.
        var retired: [Task<Void, Never>] = []
        var isClosed = false
    }

    /// How long a call waits for a connection before the servers are looked at again (several
    /// servers only): a pool whose server died tries to connect for a minute before it fails
    /// its waiting calls.
    static let leasePatience: Duration = .seconds(2)
    /// How many rounds over the servers one look makes before it gives up (about 35 s).
    static let relocationRounds = 20

    /// The location as given, every server included.
    let location: PostgresLocation
    private let writing: Bool
    private let logger: Logger
    private let clock: any Clock<Duration>
    private let state: Mutex<State>

    /// Finds the server to use (``ServerLocator/locate(_:writing:inUse:logger:)``, which throws
    /// ``EventStoreError/Code/storeUnavailable`` when none fits) and starts a pool on it.
    init(location: PostgresLocation, writing: Bool, logger: Logger, clock: any Clock<Duration>) async throws {
        self.location = location
        self.writing = writing
        self.logger = logger
        self.clock = clock
        let server = try await ServerLocator.locate(location, writing: writing, logger: logger)
        state = Mutex(State(current: Self.pool(on: server, of: location, generation: 0, logger: logger)))
    }

    private static func pool(on server: Int, of location: PostgresLocation, generation: Int, logger: Logger) -> Current {
        let client = PostgresClient(configuration: location.narrowed(to: server).clientConfiguration, backgroundLogger: logger)
        return Current(client: client, task: Task { await client.run() }, server: server, generation: generation)
    }

    /// The location narrowed to the server in use: where the connections of their own (the
    /// listener, the owner session, the open's probe) connect. It does not wait for a look under
    /// way (a handle's close would wait for it): a connection made to the old server fails, and
    /// is made again after its pause, by then on the new one.
    var currentLocation: PostgresLocation {
        location.narrowed(to: state.withLock { $0.current.server })
    }

    /// The server the pool in use is on (for tests and logs).
    var serverInUse: PostgresLocation.Endpoint {
        state.withLock { location.endpoints[$0.current.server] }
    }

    /// The pool in use; while the servers are looked at, the pool that look settles on.
    private func current() async throws -> Current {
        let (current, relocating) = try state.withLock { state throws(EventStoreError) in
            guard !state.isClosed else { throw EventStoreError.closedStore }
            return (state.current, state.callsWait ? state.relocating : nil)
        }
        return try await relocating?.value ?? current
    }

    /// Runs `body` with a connection of the pool in use (see the type's comment for what a
    /// failover does to it). Throws what `body` or the pool threw, unmapped.
    func withConnection<R: Sendable>(_ body: (PostgresConnection) async throws -> R) async throws -> R {
        try await withServerConnection { connection, _ in try await body(connection) }
    }

    /// ``withConnection(_:)``, also telling `body` which pool lent the connection: a number that
    /// changes each time the pool moves to another server, so that what is known of one server
    /// (``ReplicatedPositions``) is never taken as known of the next.
    func withServerConnection<R: Sendable>(_ body: (PostgresConnection, _ poolGeneration: Int) async throws -> R) async throws -> R {
        var madeAgain = false
        while true {
            let current = try await current()
            let lent = LentFlag()
            let watchdog: Task<Void, Never>? =
                location.choosesAmongServers
                ? Task { [clock] in
                    try? await clock.sleep(for: Self.leasePatience)
                    guard !Task.isCancelled, !lent.isSet else { return }
                    self.suspect(current, reason: "no connection was lent in \(Self.leasePatience)", broken: false)
                } : nil
            defer { watchdog?.cancel() }
            do {
                return try await current.client.withConnection { connection in
                    lent.set()
                    return try await body(connection, current.generation)
                }
            } catch {
                if Self.isFailover(error) { suspect(current, reason: "\(error)", broken: true) }
                if !lent.isSet, !madeAgain, location.choosesAmongServers, let now = try? await self.current(),
                    now.generation != current.generation
                {
                    // The pool was replaced while this call waited for a connection: its
                    // statement never ran, so it goes to the new server.
                    madeAgain = true
                    continue
                }
                throw error
            }
        }
    }

    /// Runs `body` in a transaction on a connection of the pool in use (``withConnection(_:)``).
    func withTransaction<R: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> R) async throws -> R {
        try await withConnection { connection in try await connection.withTransaction(logger: logger) { try await body($0) } }
    }

    /// Runs `query` on a connection of the pool in use and collects its rows. The connection is
    /// back in the pool when this returns, unlike with `PostgresClient.query(_:)`, whose row
    /// sequence gives it back only when the pool hears the sequence ended: a lease made before
    /// that opens a second connection, and a short command would hold two where one does.
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await withConnection { connection in try await connection.rows(query, logger: logger) }
    }

    /// How long a statement that must answer soon (an append function's call) may go without
    /// an answer before its connection is taken as lost: longer than a synchronous standby's
    /// catching up after a failover (about 15 s here), far shorter than TCP's own give-up.
    static let answerPatience: Duration = .seconds(30)

    /// ``rows(_:logger:)`` for a statement that must answer within `patience`, the wait for a
    /// connection included. When it has not, its connection is closed (which fails the
    /// statement as a lost connection does) and a wait for a connection is given up, and the
    /// call fails with ``NoAnswer`` (a failover's failure, ``lostUnderCall(_:)``), so that the
    /// caller makes it again or learns its outcome is unknown. A connection whose peer vanished
    /// without a word, or a lease awaited from a pool already shut down, would otherwise keep
    /// the call for good (postgres-nio's queries do not end on cancellation): a long run of
    /// failovers once left every append of a server waiting behind one such call.
    func rows(_ query: PostgresQuery, logger: Logger, answeredWithin patience: Duration) async throws -> [PostgresRow] {
        let held = HeldConnection<PostgresConnection> { await $0.closeFully() }
        return try await Self.answered(
            within: patience, clock: clock, logger: logger, metadata: ["store": "\(location)"],
            givingUp: { await held.close() },
            { [self] in
                try await withConnection { connection in
                    held.hold(connection)
                    let answer: Result<[PostgresRow], any Error>
                    do {
                        answer = .success(try await connection.rows(query, logger: logger))
                    } catch {
                        answer = .failure(error)
                    }
                    // A connection given up goes back to the pool only once its close has
                    // finished, so that the pool knows it closed and lends it to nobody.
                    await held.release()
                    return try answer.get()
                }
            })
    }

    /// Runs `work` (statements on a connection) and waits `patience` at most for it: then
    /// `givingUp` runs (it closes the connection the work holds, which fails its statement as a
    /// lost connection does), the work is cancelled, and the call fails with ``NoAnswer`` a
    /// moment later unless the work's own failure came first. Once `givingUp` has begun, the
    /// call returns only after it finished: a caller that went on at once could be lent the
    /// connection while it closes, and its next statement would fail (a test's append did, about
    /// one time in four in a full suite). Throws what `work` threw.
    static func answered<R: Sendable>(
        within patience: Duration, clock: any Clock<Duration>, logger: Logger, metadata: Logger.Metadata,
        givingUp: @escaping @Sendable () async -> Void, _ work: @escaping @Sendable () async throws -> R
    ) async throws -> R {
        let race = FirstOutcome<R>()
        let gate = GivingUpGate()
        let task = Task {
            let outcome: Result<R, any Error>
            do {
                outcome = .success(try await work())
            } catch {
                outcome = .failure(error)
            }
            await gate.settle()
            race.finish(outcome)
        }
        let timer = Task {
            guard (try? await clock.sleep(for: patience)) != nil, let givingUp = gate.begin(givingUp) else { return }
            logger.warning(
                "a PostgreSQL statement got no answer in time; giving up its connection",
                metadata: metadata.merging(["seconds": "\(patience.components.seconds)"]) { $1 })
            await givingUp.value
            task.cancel()
            // The work's own failure (the connection closed under it) is the better answer;
            // whatever it does, the caller goes on a moment later.
            try? await clock.sleep(for: .seconds(1))
            race.finish(.failure(NoAnswer(patience: patience)))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { race.wait($0) }
    }

    /// A statement that got no answer within its patience (``rows(_:logger:answeredWithin:)``).
    struct NoAnswer: Error, CustomStringConvertible {
        let patience: Duration
        var description: String { "PostgreSQL gave no answer in \(patience.components.seconds) s; its connection was given up" }
    }

    /// Says that a connection of its own (the listener's, the owner session's) dropped: with
    /// several servers, they are looked at again, as after a call's failure.
    func connectionDropped(reason: String) {
        guard let current = state.withLock({ $0.isClosed ? nil : $0.current }) else { return }
        suspect(current, reason: reason, broken: false)
    }

    /// Starts a look at the servers, unless there is one server, `seen` is no longer the pool in
    /// use, or a look is under way (which calls then wait for if `broken`: the pool in use failed
    /// as a failover makes it fail, so it is no use waiting on it).
    private func suspect(_ seen: Current, reason: String, broken: Bool) {
        guard location.choosesAmongServers else { return }
        state.withLock { state in
            guard !state.isClosed, state.current.generation == seen.generation else { return }
            if broken { state.callsWait = true }
            guard state.relocating == nil else { return }
            logger.notice(
                "looking for the PostgreSQL server to use again",
                metadata: ["store": "\(location)", "server": "\(location.endpoints[seen.server])", "reason": "\(reason)"])
            state.relocating = Task { try await self.relocate(from: seen) }
        }
    }

    /// Looks at the servers until one fits, and moves the pool to it if it is another.
    private func relocate(from seen: Current) async throws -> Current {
        var pause = Duration.milliseconds(100)
        var round = 1
        while true {
            do {
                let server = try await ServerLocator.locate(location, writing: writing, inUse: seen.server, logger: logger)
                return settle(on: server)
            } catch {
                guard round < Self.relocationRounds, !Task.isCancelled, !state.withLock({ $0.isClosed }) else {
                    state.withLock { state in
                        state.relocating = nil
                        state.callsWait = false
                    }
                    logger.warning("no PostgreSQL server fits; the next call looks again", metadata: ["store": "\(location)", "reason": "\(error)"])
                    throw error
                }
                logger.notice(
                    "no PostgreSQL server fits yet; looking again", metadata: ["store": "\(location)", "round": "\(round)", "reason": "\(error)"])
                try? await clock.sleep(for: pause)
                pause = min(pause * 2, .seconds(2))
                round += 1
            }
        }
    }

    /// Ends the look: keeps the pool when `server` is the one in use, or makes one on `server`
    /// and shuts the old one down.
    private func settle(on server: Int) -> Current {
        let (current, retired) = state.withLock { state -> (Current, Current?) in
            state.relocating = nil
            state.callsWait = false
            guard !state.isClosed, state.current.server != server else { return (state.current, nil) }
            let old = state.current
            state.current = Self.pool(on: server, of: location, generation: old.generation + 1, logger: logger)
            state.retired.append(old.task)
            return (state.current, old)
        }
        if let retired {
            logger.notice(
                "switched to another PostgreSQL server",
                metadata: [
                    "store": "\(location)", "from": "\(location.endpoints[retired.server])", "to": "\(location.endpoints[server])",
                ])
            retired.task.cancel()
        }
        return current
    }

    /// The tests' fault: answers of committed appends to lose (``LosingAnswers``); none unless a test asks.
    let losingAnswers = LosingAnswers()

    /// Whether the pool looks for another server after `error`: it names several servers, and
    /// the error is one a failover causes (``isFailover(_:)``). A call that failed so may be made again.
    func survives(_ error: any Error) -> Bool {
        location.choosesAmongServers && Self.isFailover(error)
    }

    /// Whether `error` says the connection failed under a statement it had been sent, so that
    /// the statement may have run (and committed): the connection lost or shut by the server,
    /// or closed under the call. Not a refusal that ran nothing (a standby's 25006, 57P03) and
    /// not a connection the pool could not make.
    static func lostUnderCall(_ error: any Error) -> Bool {
        if error is LosingAnswers.Lost || error is NoAnswer || error is ClosedUnderStatement { return true }
        guard let error = error as? PSQLError else { return false }
        if let state = error.serverInfo?[.sqlState] {
            return state == "57P01" || state == "57P02" || state.hasPrefix("08")
        }
        switch error.code {
        case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .connectionError: return true
        default: return false
        }
    }

    /// Whether `error` is one a failover causes: the connection lost (before a statement was
    /// sent, too: ``ConnectionClosed``; or closed under it with no answer: ``ClosedUnderStatement``) or refused, the server shutting down or read-only (a primary turned standby), the pool giving up on it.
    static func isFailover(_ error: any Error) -> Bool {
        if error is LosingAnswers.Lost || error is NoAnswer || error is ConnectionClosed || error is ClosedUnderStatement { return true }
        if let error = error as? PSQLError {
            if let state = error.serverInfo?[.sqlState] {
                // 57P04 (the database dropped) and 57P05 (a session idle too long) are no failover.
                return state == "25006" || state == "57P01" || state == "57P02" || state == "57P03" || state.hasPrefix("08")
            }
            switch error.code {
            // The client's side closed too: the connection of a pool shut down when the store
            // moved to another server (a closed store then refuses the call made again).
            case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed: return true
            default: return false
            }
        }
        if let error = error as? EventStoreError { return error.code == .storeUnavailable }
        return String(describing: error).hasPrefix("ConnectionPoolError")
    }

    /// Shuts the pool down (and any look under way, and the pools a move retired); returns when
    /// their tasks have ended.
    func close() async {
        let relocating = state.withLock { state in
            state.isClosed = true
            return state.relocating
        }
        relocating?.cancel()
        _ = try? await relocating?.value
        // A look that settled after the close saw isClosed and made no pool.
        let (current, retired) = state.withLock { ($0.current, $0.retired) }
        current.task.cancel()
        await current.task.value
        for task in retired { await task.value }
    }
}

/// The connection a call holds now, for the timer that may give it up (``close()``): the call
/// ``release()``s it before giving it back to the pool, which waits for a close begun meanwhile,
/// and a connection released is never closed by the timer (it may be lent to another call).
/// Generic over the connection so that tests hold fakes.
final class HeldConnection<Connection: Sendable>: Sendable {
    private enum State {
        case free
        case holding(Connection)
        case closing(Task<Void, Never>)
        /// Given up before a connection was lent: the one lent after is closed at once.
        case givenUp
    }
    private let state = Mutex(State.free)
    private let closer: @Sendable (Connection) async -> Void

    /// `closer` closes a connection and returns once whoever lent it knows it closed.
    init(closer: @escaping @Sendable (Connection) async -> Void) {
        self.closer = closer
    }

    /// Notes the connection the call was lent; closes it at once when the call was given up
    /// while it waited for it (its statement then fails as on a lost connection).
    func hold(_ connection: Connection) {
        state.withLock { state in
            if case .givenUp = state {
                state = .closing(Task { [closer] in await closer(connection) })
            } else {
                state = .holding(connection)
            }
        }
    }

    /// Closes the connection held now, if any, and returns once it closed; with none held yet,
    /// the next one lent is closed as it is held.
    func close() async {
        let closing = state.withLock { state -> Task<Void, Never>? in
            switch state {
            case .holding(let connection):
                let closing = Task { [closer] in await closer(connection) }
                state = .closing(closing)
                return closing
            case .free:
                state = .givenUp
                return nil
            case .closing, .givenUp:
                return nil
            }
        }
        await closing?.value
    }

    /// Ends the hold; returns once a close begun on the connection has finished.
    func release() async {
        let closing = state.withLock { state -> Task<Void, Never>? in
            defer { state = .free }
            guard case .closing(let closing) = state else { return nil }
            return closing
        }
        await closing?.value
    }
}

/// Whether ``PoolSwitch/answered(within:clock:logger:metadata:givingUp:_:)`` gave its work up:
/// the work's outcome, once settled, and the timer's giving up, once begun, exclude each other,
/// and an outcome that comes while the giving up runs waits for it to finish.
private final class GivingUpGate: Sendable {
    private struct State {
        var settled = false
        var givingUp: Task<Void, Never>?
    }
    private let state = Mutex(State())

    /// Starts `givingUp` unless the work's outcome came first (then nil).
    func begin(_ givingUp: @escaping @Sendable () async -> Void) -> Task<Void, Never>? {
        state.withLock { state in
            guard !state.settled else { return nil }
            let task = Task { await givingUp() }
            state.givingUp = task
            return task
        }
    }

    /// Says the work's outcome came; returns once a giving up begun before it has finished.
    func settle() async {
        let givingUp = state.withLock { state -> Task<Void, Never>? in
            state.settled = true
            return state.givingUp
        }
        await givingUp?.value
    }
}

extension PostgresConnection {
    /// Closes the connection and returns once its close future has completed: the pool that
    /// lent it heard of the close by then (its callback on that future was registered first),
    /// so it will not lend the connection again.
    func closeFully() async {
        try? await close()
        try? await closeFuture.get()
    }
}

/// Whether a call was lent its connection (so whether its statement may have run).
private final class LentFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
