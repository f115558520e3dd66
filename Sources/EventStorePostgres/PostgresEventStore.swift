import EventStoreCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The event store on PostgreSQL: the same `EventLog` as the embedded LMDB store, for many
/// processes on many hosts sharing one database.
///
/// Positions are gapless and in commit order (every append locks one head row to commit; see
/// docs/FORMAT.md, "On PostgreSQL"); concurrent appends of this process are grouped into one
/// call of the server's append function (one round trip, one commit). Subscriptions wake on
/// LISTEN/NOTIFY and read the table, which is the truth; when the listening connection drops
/// they poll on the injected clock until it is back.
///
/// The configuration's clock, id generator, poll interval and clock, lag notice and logger apply;
/// its LMDB settings (durability, map size, stale readers) do not: PostgreSQL's own settings
/// (`synchronous_commit`) decide durability.
public final class PostgresEventStore: EventLog, SubscriptionSource {
    /// Options for opening the store: `StoreConfiguration`, under the name users look for.
    public typealias Configuration = StoreConfiguration
    /// The database, as given.
    public let postgresLocation: PostgresLocation
    /// The configuration the store was opened with.
    public let configuration: StoreConfiguration
    /// How the store was opened (`OpenMode.readOnly` refuses every write).
    public let mode: OpenMode
    package let headSignal: HeadSignal
    /// The store's metrics (``StoreConfiguration/metricsFactory``).
    package let metrics: StoreMetrics

    /// The pool of connections, on the server of the location that fits (after a failover, the new one).
    let pool: PoolSwitch
    /// The session whose advisory lock says this handle is open (``ownerID``), once taken.
    private let owner: OwnerClaim
    private let listener: HeadListener
    let appender: Appender
    /// The tables this handle has opened.
    let openedTables = OpenedTables()
    /// The database's schema version as this handle found it (after any upgrade it made).
    let databaseSchemaVersion: Int
    /// The columns its reads select (see ``eventColumns(schemaVersion:)``).
    let eventColumns: String
    /// The upcasters every read applies (``StoreConfiguration/upcasters``, checked).
    package let upcasting: Upcasting
    private let isClosed = Atomic<Bool>(false)
    /// The calls holding or waiting for a connection, which close lets finish.
    let inFlight = InFlightCalls()
    /// The positions known to be on the synchronous standby, which reads hand out without a barrier.
    let replicatedPositions = ReplicatedPositions()
    /// The task that closes the handle, once `close()` started it.
    private let closing = Mutex<Task<Void, Never>?>(nil)

    /// The database URL without its password.
    public var location: String { postgresLocation.description }

    /// Opens the store in the database `url` names (see ``PostgresLocation``): by default creating
    /// its tables when the database has none; with `OpenMode.existing` or `OpenMode.readOnly`
    /// a database without them is `EventStoreError.Code.notFound` and nothing is created.
    ///
    /// Throws `EventStoreError` with `EventStoreError.Code.invalidInput` for a malformed URL,
    /// `EventStoreError.Code.storeUnavailable` when the server cannot be reached or refuses the
    /// login, or the database holds a store of a newer schema version; `EventStoreError.Code.invalidInput`
    /// when the configuration's upcasters have a gap (see `StoreConfiguration.upcasters`).
    public convenience init(url: String, mode: OpenMode = .createIfMissing, configuration: StoreConfiguration = StoreConfiguration()) async throws {
        try await self.init(location: PostgresLocation(url: url), mode: mode, configuration: configuration)
    }

    /// Opens the store at `location`; see ``init(url:mode:configuration:)``.
    public init(location: PostgresLocation, mode: OpenMode = .createIfMissing, configuration: StoreConfiguration = StoreConfiguration()) async throws {
        upcasting = try Upcasting(configuration.upcasters)
        let pool = try await PoolSwitch(
            location: location, writing: mode != .readOnly, logger: configuration.logger, clock: configuration.pollClock)
        let prepared: (head: UInt64, schemaVersion: Int)
        do {
            prepared = try await Self.prepare(pool, location: location, mode: mode, configuration: configuration)
        } catch {
            await pool.close()
            throw error
        }
        let head = prepared.head
        databaseSchemaVersion = prepared.schemaVersion
        eventColumns = EventStorePostgres.eventColumns(schemaVersion: prepared.schemaVersion)
        let listener = HeadListener(pool: pool, logger: configuration.logger)
        let headSignal = HeadSignal(
            head: head, pollInterval: configuration.pollInterval, clock: configuration.pollClock, logger: configuration.logger,
            poll: { [listener, logger = configuration.logger] in
                listener.startIfNeeded()
                if listener.isListening { return nil }
                return try await Self.readHead(pool, logger: logger)
            })
        self.postgresLocation = location
        self.configuration = configuration
        self.mode = mode
        self.pool = pool
        self.owner = OwnerClaim {
            try await OwnerSession.open(pool, logger: configuration.logger, retryEvery: configuration.pollInterval, on: configuration.pollClock)
        }
        self.headSignal = headSignal
        let metrics = StoreMetrics(factory: configuration.metricsFactory)
        self.metrics = metrics
        self.listener = listener
        listener.configure(publishingTo: headSignal, retryEvery: configuration.pollInterval, on: configuration.pollClock)
        self.appender = Appender(
            client: pool, clock: configuration.clock, maximumEventsPerCall: configuration.maximumEventsPerCommit,
            logger: configuration.logger, metrics: metrics, headSignal: headSignal)
        appender.setTrimmer { [weak self] stream in try await self?.trimAfterAppend(stream) ?? [] }
        do {
            // Every read of personal data looks its subject's key up in this table; an open for
            // writing finishes the steps of forgets a crash interrupted.
            try await openTables([SubjectKeys.table])
            if mode != .readOnly { try await finishForgetting() }
        } catch {
            await close()
            throw error
        }
    }

    /// How long the open waits for the pool's first connection before it connects once on its
    /// own to learn why none came (the pool tries again and again, for a minute, without saying).
    static let openPatience: Duration = .seconds(1)

    /// Finds, creates or upgrades the store's tables through the pool (its first connection is
    /// the one every later call reuses). When the pool has lent no connection after
    /// ``openPatience`` on the poll clock, one connection of its own says why, at once: a server
    /// that cannot be reached or refuses the login, or one that still refuses for now after
    /// ``OwnConnection/refusalPauses`` (``EventStoreError/Code/storeUnavailable``). A server that
    /// takes that connection is only slow, and the open goes on waiting for the pool; an open
    /// that has its connection and is slow for another reason (the schema lock, an upgrade) is
    /// left alone.
    private static func prepare(
        _ client: PoolSwitch, location: PostgresLocation, mode: OpenMode, configuration: StoreConfiguration
    ) async throws -> (head: UInt64, schemaVersion: Int) {
        let logger = configuration.logger
        let clock = configuration.pollClock
        let leased = FirstLease()
        return try await withThrowingTaskGroup(of: (head: UInt64, schemaVersion: Int)?.self) { group in
            group.addTask {
                try await client.withConnection { _ in leased.note() }
                return try await PostgresSchemaSetup.prepare(client, location: location, mode: mode, logger: logger)
            }
            group.addTask {
                try await clock.sleep(for: openPatience)
                guard !leased.happened else { return nil }
                do {
                    let probe = try await OwnConnection.connect(client.currentLocation, as: .probe, logger: logger, on: clock)
                    try? await probe.close()
                } catch where leased.happened {
                    // The pool connected meanwhile: its answer is the one that counts.
                }
                return nil
            }
            while let next = try await group.next() {
                if let prepared = next {
                    group.cancelAll()
                    return prepared
                }
            }
            throw EventStoreError(.storageFailure, "Opening the store in \(location) ended without an answer.")
        }
    }

    deinit {
        close()
    }

    /// Closes the handle, keeping the promise every backend keeps (`StoreHandle.close()`):
    /// new calls are refused at once; the appends already queued are made, and their callers
    /// get their results; the calls under way (reads, table transactions, deletions) finish;
    /// then the listener, the owner session and the pool's connections close. Returns when all
    /// of that is done. Idempotent: a second call waits for the first. From inside a table
    /// closure it does nothing.
    public func close() async {
        // From inside a table closure it would wait for that closure's own transaction.
        if TableClosure.isRunning { return }
        await startClosing().value
    }

    /// Starts closing as `close()` does and returns at once, for `deinit` and `defer`, where
    /// nothing can be awaited: the queued appends still finish and the connections still close,
    /// in the background. Prefer `await close()`.
    public func close() {
        if TableClosure.isRunning { return }
        _ = startClosing()
    }

    /// Refuses new calls and starts the one task that closes the handle (once).
    private func startClosing() -> Task<Void, Never> {
        closing.withLock { closing in
            if let closing { return closing }
            isClosed.store(true, ordering: .releasing)
            appender.shutDown()
            headSignal.close()
            let listening = listener.stop()
            let task = Task { [appender, inFlight, owner, pool] in
                await appender.drained()
                await inFlight.finished()
                await listening?.value
                await owner.close()
                await pool.close()
            }
            closing = task
            return task
        }
    }

    /// This handle's owner id: the second key of the advisory lock its owner session holds while
    /// it is open (see `LogOwnership.ownerID`). The first call takes the session (a connection
    /// of its own); throws `EventStoreError.Code.storeUnavailable` when it cannot be made.
    public var ownerID: Int64 {
        get async throws {
            try checkOpen()
            return try await owner.id()
        }
    }

    /// The owner id once the owner session is taken, nil before (see
    /// `LogOwnership.takenOwnerID`); never takes it.
    public var takenOwnerID: Int64? { owner.takenID }

    /// Whether the handle whose ``ownerID`` is `owner` still has the store open, on any host: its
    /// owner lock is granted in this database. Throws `EventStoreError` when the database
    /// cannot be asked.
    public func isOwnerAlive(_ owner: Int64) async throws -> Bool {
        try checkOpen()
        if owner == self.owner.takenID { return true }
        do {
            return try await OwnerSession.isAlive(owner, client: pool, logger: configuration.logger)
        } catch {
            throw PostgresErrors.mapped(error, location: location)
        }
    }

    /// How many transactions this handle committed (calls of the append function, which group
    /// concurrent appends, and the table API's writes) and how many appends and table writes
    /// they completed, as `EventStore.writerStatistics` counts them.
    public var writerStatistics: WriterStatistics { appender.statistics }

    /// Whether `close()` has been called.
    public var closed: Bool { isClosed.load(ordering: .acquiring) }

    func checkOpen() throws(EventStoreError) {
        if closed { throw EventStoreError.closedStore }
    }

    func checkWritable() throws(EventStoreError) {
        try checkOpen()
        if mode == .readOnly {
            throw EventStoreError(.storeUnavailable, "The store was opened read-only; open it for writing to append.")
        }
    }

    // MARK: Appending

    /// Appends to one or more streams atomically; see `EventStore.append(_:)` for the rules,
    /// which are the same. Concurrent calls share one round trip and one commit.
    public func append(_ appends: [StreamAppend]) async throws -> [AppendResult] {
        try checkWritable()
        try Limits.validate(appends)
        return try await submit(try await sealingPersonalData(appends), tracking: nil)
    }

    /// Appends and records `tracking` in the same transaction; see
    /// `EventStore.append(_:tracking:)`. `appends` may be empty.
    @discardableResult
    public func append(_ appends: [StreamAppend], tracking: TrackingPosition) async throws -> [AppendResult] {
        try checkWritable()
        try tracking.validate()
        if !appends.isEmpty { try Limits.validate(appends) }
        return try await submit(appends.isEmpty ? appends : try await sealingPersonalData(appends), tracking: tracking)
    }

    private func submit(_ appends: [StreamAppend], tracking: TrackingPosition?) async throws -> [AppendResult] {
        try TableClosure.checkOutside("an append")
        let request = self.request(appends, tracking: tracking)
        return try await withCheckedThrowingContinuation { continuation in
            appender.submit(Appender.Job(request: request, continuation: continuation))
        }
    }

    /// An append in stored form, with the ids it will carry (the generator's for events without one).
    func request(_ appends: [StreamAppend], tracking: TrackingPosition?) -> AppendRequest {
        var appends = appends
        StoredForm.apply(to: &appends)
        let generator = configuration.idGenerator
        return AppendRequest(appends: appends, ids: appends.map { $0.events.map { $0.id ?? generator() } }, tracking: tracking)
    }

    /// How many appends wait for the call in flight to finish (for tests).
    var queuedAppendCount: Int { appender.queuedJobCount }

    /// Runs `body` with a connection, turning the driver's errors into ``EventStoreError``s.
    func withConnection<R: Sendable>(_ body: (PostgresConnection) async throws -> R) async throws -> R {
        try checkOpen()
        do {
            return try await inFlight.run { try await pool.withConnection { connection in try await body(connection) } }
        } catch {
            throw PostgresErrors.mapped(error, location: location)
        }
    }

    /// The head row, read in its own statement.
    static func readHead(_ client: PoolSwitch, logger: Logger) async throws -> UInt64 {
        try await client.withConnection { connection in try await readHead(connection, logger: logger) }
    }

    /// The head row, read on a connection already held (never lease a second connection while
    /// holding one: with every connection of the pool held that way, none is ever returned).
    static func readHead(_ connection: PostgresConnection, logger: Logger) async throws -> UInt64 {
        guard let row = try await connection.rows("SELECT position FROM eventstore.head", logger: logger).first else {
            throw EventStoreError(.damaged, "The head row of the store is missing; run `esctl verify`.")
        }
        return UInt64(max(try row.decode(Int64.self), 0))
    }

    // MARK: SubscriptionSource

    package func refreshHead() async throws {
        // A subscriber is about to wait: from now on, appends of every process wake it.
        listener.startIfNeeded()
        guard !listener.isListening else { return }
        headSignal.publish(try await headPosition())
    }

    /// Subscribes to the log from `start`, passing only events that match `filter`; see
    /// `EventStore.subscribe(from:filter:)`. Appends made by any process on any host are
    /// delivered, woken by NOTIFY (or the poll while the listening connection is down).
    public func subscribe(from start: SubscriptionStart = .start, filter: EventFilter = .all) -> Subscription {
        let first: UInt64
        switch start {
        case .start: first = 1
        case let .position(position): first = max(position, 1)
        case .end: first = headSignal.current + 1
        }
        return Subscription(source: self, firstPosition: first, filter: filter)
    }
}

/// The names of the tables a handle has opened (a table must be opened before it is used, as on LMDB).
final class OpenedTables: Sendable {
    private let names = Mutex<Set<String>>([])

    func contains(_ name: String) -> Bool { names.withLock { $0.contains(name) } }

    func missing(_ wanted: [String]) -> [String] { names.withLock { Array(Set(wanted).subtracting($0)).sorted() } }

    func insert(_ opened: [String]) { names.withLock { $0.formUnion(opened) } }
}

/// Whether the open's first lease of the pool has come (set once, read by its probe).
private final class FirstLease: Sendable {
    private let flag = Atomic<Bool>(false)
    func note() { flag.store(true, ordering: .releasing) }
    var happened: Bool { flag.load(ordering: .acquiring) }
}
