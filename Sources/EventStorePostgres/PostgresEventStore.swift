import EventStoreCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The event store on PostgreSQL: the same ``EventLog`` as the embedded LMDB store, for many
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
    /// How the store was opened (``OpenMode/readOnly`` refuses every write).
    public let mode: OpenMode
    package let headSignal: HeadSignal
    /// The store's metrics (``StoreConfiguration/metricsFactory``).
    package let metrics: StoreMetrics

    let client: PostgresClient
    /// The session whose advisory lock says this handle is open (``ownerID``).
    private let owner: OwnerSession
    private let clientTask: Task<Void, Never>
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

    /// The database URL without its password.
    public var location: String { postgresLocation.description }

    /// Opens the store in the database `url` names (see ``PostgresLocation``): by default creating
    /// its tables when the database has none; with ``OpenMode/existing`` or ``OpenMode/readOnly``
    /// a database without them is ``EventStoreError/Code/notFound`` and nothing is created.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/invalidInput`` for a malformed URL,
    /// ``EventStoreError/Code/storeUnavailable`` when the server cannot be reached or refuses the
    /// login, or the database holds a store of a newer schema version; ``EventStoreError/Code/invalidInput``
    /// when the configuration's upcasters have a gap (see ``StoreConfiguration/upcasters``).
    public convenience init(url: String, mode: OpenMode = .createIfMissing, configuration: StoreConfiguration = StoreConfiguration()) async throws {
        try await self.init(location: PostgresLocation(url: url), mode: mode, configuration: configuration)
    }

    /// Opens the store at `location`; see ``init(url:mode:configuration:)``.
    public init(location: PostgresLocation, mode: OpenMode = .createIfMissing, configuration: StoreConfiguration = StoreConfiguration()) async throws {
        // The pool waits for a connection as long as it takes, trying again and again: at a server
        // that cannot be reached (or refuses the login) opening would wait forever. The owner
        // session's connection, made first, says at once, and why.
        upcasting = try Upcasting(configuration.upcasters)
        let owner = try await OwnerSession.open(
            location, logger: configuration.logger, retryEvery: configuration.pollInterval, on: configuration.pollClock)
        let client = PostgresClient(configuration: location.clientConfiguration, backgroundLogger: configuration.logger)
        let clientTask = Task { await client.run() }
        let head: UInt64
        do {
            let prepared = try await PostgresSchemaSetup.prepare(client, location: location, mode: mode, logger: configuration.logger)
            head = prepared.head
            databaseSchemaVersion = prepared.schemaVersion
            eventColumns = EventStorePostgres.eventColumns(schemaVersion: prepared.schemaVersion)
        } catch {
            clientTask.cancel()
            owner.close()
            throw error
        }
        let listener = HeadListener(client: client, logger: configuration.logger)
        let headSignal = HeadSignal(
            head: head, pollInterval: configuration.pollInterval, clock: configuration.pollClock, logger: configuration.logger,
            poll: { [listener] in
                listener.startIfNeeded()
                if listener.isListening { return nil }
                return try await Self.readHead(client)
            })
        self.postgresLocation = location
        self.configuration = configuration
        self.mode = mode
        self.client = client
        self.owner = owner
        self.clientTask = clientTask
        self.headSignal = headSignal
        let metrics = StoreMetrics(factory: configuration.metricsFactory)
        self.metrics = metrics
        self.listener = listener
        listener.configure(publishingTo: headSignal, retryEvery: configuration.pollInterval, on: configuration.pollClock)
        self.appender = Appender(
            client: client, clock: configuration.clock, maximumEventsPerCall: configuration.maximumEventsPerCommit,
            logger: configuration.logger, metrics: metrics, headSignal: headSignal)
        appender.setTrimmer { [weak self] stream in try await self?.trimAfterAppend(stream) ?? [] }
        do {
            // Every read of personal data looks its subject's key up in this table; an open for
            // writing finishes the steps of forgets a crash interrupted.
            try await openTables([SubjectKeys.table])
            if mode != .readOnly { try await finishForgetting() }
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Refuses new calls; the appends already queued are still made (their callers get their
    /// results), then the connections close. Idempotent; returns at once (the queued appends
    /// finish in the background).
    public func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        appender.shutDown()
        headSignal.close()
        listener.stop()
        owner.close()
        Task { [appender, clientTask] in
            await appender.drained()
            clientTask.cancel()
        }
    }

    /// This handle's owner id: the second key of the advisory lock its owner session holds while
    /// it is open (see ``LogOwnership/ownerID``).
    public var ownerID: Int64 { owner.id }

    /// Whether the handle whose ``ownerID`` is `owner` still has the store open, on any host: its
    /// owner lock is granted in this database. Throws ``EventStoreError`` when the database
    /// cannot be asked.
    public func isOwnerAlive(_ owner: Int64) async throws -> Bool {
        try checkOpen()
        if owner == ownerID { return true }
        do {
            return try await OwnerSession.isAlive(owner, client: client)
        } catch {
            throw PostgresErrors.mapped(error, location: location)
        }
    }

    /// How many transactions this handle committed (calls of the append function, which group
    /// concurrent appends, and the table API's writes) and how many appends and table writes
    /// they completed, as ``EventStore/writerStatistics`` counts them.
    public var writerStatistics: WriterStatistics { appender.statistics }

    /// Whether ``close()`` has been called.
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

    /// Appends to one or more streams atomically; see ``EventStore/append(_:)`` for the rules,
    /// which are the same. Concurrent calls share one round trip and one commit.
    public func append(_ appends: [StreamAppend]) async throws -> [AppendResult] {
        try checkWritable()
        try Limits.validate(appends)
        return try await submit(try await sealingPersonalData(appends), tracking: nil)
    }

    /// Appends and records `tracking` in the same transaction; see
    /// ``EventStore/append(_:tracking:)``. `appends` may be empty.
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
            return try await client.withConnection { connection in try await body(connection) }
        } catch {
            throw PostgresErrors.mapped(error, location: location)
        }
    }

    /// The head row, read in its own statement.
    static func readHead(_ client: PostgresClient) async throws -> UInt64 {
        try await head(of: try await client.query("SELECT position FROM eventstore.head"))
    }

    /// The head row, read on a connection already leased (never lease a second connection while
    /// holding one: with every connection of the pool held that way, none is ever returned).
    static func readHead(_ connection: PostgresConnection, logger: Logger) async throws -> UInt64 {
        try await head(of: try await connection.query("SELECT position FROM eventstore.head", logger: logger))
    }

    private static func head(of rows: PostgresRowSequence) async throws -> UInt64 {
        for try await position in rows.decode(Int64.self) { return UInt64(max(position, 0)) }
        throw EventStoreError(.damaged, "The head row of the store is missing; run `esctl verify`.")
    }

    // MARK: SubscriptionSource

    package func refreshHead() async throws {
        // A subscriber is about to wait: from now on, appends of every process wake it.
        listener.startIfNeeded()
        guard !listener.isListening else { return }
        headSignal.publish(try await headPosition())
    }

    /// Subscribes to the log from `start`, passing only events that match `filter`; see
    /// ``EventStore/subscribe(from:filter:)``. Appends made by any process on any host are
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
