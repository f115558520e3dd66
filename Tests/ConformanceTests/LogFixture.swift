import CoreMetrics
import EventStore
import EventStorePostgres
import EventStoreTesting
import Foundation
import PostgresTestSupport
import Testing

/// The backends every conformance test runs against.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case lmdb
    case postgres

    var testDescription: String { rawValue }
}

/// A fresh, empty store on one backend, with a stepping clock (or the clock a test gives) and
/// sequential ids so every recorded time and id is known in advance. ``finish()`` closes it and
/// removes it.
final class LogFixture: Sendable {
    let backend: Backend
    let clock: SteppingClock
    let ids: SequentialIDs
    private let configurationBox: ConfigurationBox
    /// The configuration the store is open with (``reopen(upcasters:)`` changes its upcasters).
    var configuration: StoreConfiguration { configurationBox.configuration }
    private let directory: TemporaryDirectory?
    /// The store's database, on PostgreSQL (to run SQL on it beside the store); nil on LMDB.
    let database: ThrowawayDatabase?
    private let opened: LogBox

    /// The store.
    var log: any EventLog { opened.log }

    private init(
        backend: Backend, directory: TemporaryDirectory?, database: ThrowawayDatabase?, options: Options
    ) async throws {
        self.backend = backend
        clock = SteppingClock()
        ids = SequentialIDs()
        let clock = clock
        let ids = ids
        let configuration = StoreConfiguration(
            durability: options.durability, clock: options.now ?? { clock.now() }, idGenerator: options.idGenerator ?? { ids.next() },
            maximumEventsPerCommit: options.maximumEventsPerCommit, metricsFactory: options.metricsFactory, upcasters: options.upcasters)
        configurationBox = ConfigurationBox(configuration)
        self.directory = directory
        self.database = database
        opened = LogBox(try await Self.open(backend, directory: directory, database: database, configuration: configuration))
    }

    /// What a test may change in the store's configuration.
    struct Options: Sendable {
        /// LMDB's durability (PostgreSQL's comes from the server's settings).
        var durability: Durability = .noSync
        /// Replaces the sequential ids when set.
        var idGenerator: (@Sendable () -> UUID)?
        var maximumEventsPerCommit = 50_000
        /// Replaces the stepping clock when set.
        var now: (@Sendable () -> Date)?
        /// Where the store's metrics go (the process's MetricsSystem when nil).
        var metricsFactory: (any MetricsFactory)?
        /// The upcasters the store opens with.
        var upcasters: [Upcaster] = []
    }

    /// A fresh store on `backend`.
    static func make(_ backend: Backend, _ options: Options = Options()) async throws -> LogFixture {
        switch backend {
        case .lmdb:
            return try await LogFixture(backend: backend, directory: try TemporaryDirectory(), database: nil, options: options)
        case .postgres:
            // The database is dropped again when opening the store fails.
            let database = try await ThrowawayDatabase.create()
            do {
                return try await LogFixture(backend: backend, directory: nil, database: database, options: options)
            } catch {
                try? await database.drop()
                throw error
            }
        }
    }

    /// The store as esctl's `--db` takes it: the LMDB directory, or the database's URL.
    var db: String {
        switch backend {
        case .lmdb: directory?.appending("store") ?? ""
        case .postgres: database?.url ?? ""
        }
    }

    private static func open(
        _ backend: Backend, directory: TemporaryDirectory?, database: ThrowawayDatabase?, configuration: StoreConfiguration,
        mode: OpenMode = .createIfMissing
    ) async throws -> any EventLog {
        switch backend {
        case .lmdb:
            return try EventStore(path: try #require(directory).appending("store"), mode: mode, configuration: configuration)
        case .postgres:
            return try await PostgresEventStore(url: try #require(database).url, mode: mode, configuration: configuration)
        }
    }

    /// Closes the store and opens the same one again, with the same clock and ids.
    func reopen() async throws {
        await opened.log.close()
        opened.log = try await Self.open(backend, directory: directory, database: database, configuration: configuration)
    }

    /// Closes the store and opens it again in `mode` (``OpenMode/readOnly``: as a user who may
    /// only read it), with the same clock and ids.
    func reopen(mode: OpenMode) async throws {
        await opened.log.close()
        opened.log = try await Self.open(backend, directory: directory, database: database, configuration: configuration, mode: mode)
    }

    /// Closes the store and opens it again with `upcasters` (and the same clock and ids). When
    /// the open throws, the store stays closed and the configuration unchanged.
    func reopen(upcasters: [Upcaster]) async throws {
        await opened.log.close()
        var changed = configuration
        changed.upcasters = upcasters
        opened.log = try await Self.open(backend, directory: directory, database: database, configuration: changed)
        configurationBox.configuration = changed
    }

    /// Opens a second handle on the same store (another "process" of a PostgreSQL store; LMDB
    /// allows one handle per process, so this is PostgreSQL only).
    func openAnother() async throws -> any EventLog {
        try await Self.open(backend, directory: directory, database: database, configuration: configuration)
    }

    /// Closes the store and removes it.
    func finish() async {
        await opened.log.close()
        try? await database?.drop()
    }

    /// The microseconds the stepping clock gives on its n-th read (0-based).
    static func micros(ofRead n: Int) -> Int64 {
        (1_767_225_600 + Int64(n)) * 1_000_000
    }
}

/// The open store, replaced by `reopen`.
private final class LogBox: @unchecked Sendable {
    // Safe: set at creation and by `reopen`, which tests call from the one task that owns the fixture.
    var log: any EventLog
    init(_ log: any EventLog) { self.log = log }
}

/// The fixture's configuration, replaced by `reopen(upcasters:)`.
private final class ConfigurationBox: @unchecked Sendable {
    // Safe: as LogBox, changed only by the one task that owns the fixture.
    var configuration: StoreConfiguration
    init(_ configuration: StoreConfiguration) { self.configuration = configuration }
}

/// Runs `body` with a fresh store on `backend`, and removes the store afterwards, whether
/// `body` throws or not.
func withLog<R>(
    _ backend: Backend, durability: Durability = .noSync, idGenerator: (@Sendable () -> UUID)? = nil,
    maximumEventsPerCommit: Int = 50_000, now: (@Sendable () -> Date)? = nil, metricsFactory: (any MetricsFactory)? = nil,
    upcasters: [Upcaster] = [], _ body: (LogFixture) async throws -> R
) async throws -> R {
    // A test on PostgreSQL takes one of the suite's slots for its stores (a store nested in
    // another of the same test shares its test's slot).
    if backend == .postgres && !PostgresSlots.held {
        await PostgresSlots.shared.acquire()
        do {
            let result = try await PostgresSlots.$held.withValue(true) {
                try await withLog(
                    backend, durability: durability, idGenerator: idGenerator, maximumEventsPerCommit: maximumEventsPerCommit, now: now,
                    metricsFactory: metricsFactory, upcasters: upcasters, body)
            }
            await PostgresSlots.shared.release()
            return result
        } catch {
            await PostgresSlots.shared.release()
            throw error
        }
    }
    let fixture = try await LogFixture.make(
        backend,
        LogFixture.Options(
            durability: durability, idGenerator: idGenerator, maximumEventsPerCommit: maximumEventsPerCommit, now: now,
            metricsFactory: metricsFactory, upcasters: upcasters))
    let result: R
    do {
        result = try await body(fixture)
    } catch {
        await fixture.finish()
        throw error
    }
    await fixture.finish()
    return result
}

/// How many tests have PostgreSQL stores open at once: Swift Testing runs every test case at
/// once, and a store holds a few connections (its pool, its listener, the table API's), so
/// without a bound the suite would exhaust the cluster's `max_connections`.
actor PostgresSlots {
    static let shared = PostgresSlots(slots: 10)
    /// Whether the current task (a test) holds a slot already.
    @TaskLocal static var held = false

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(slots: Int) {
        free = slots
    }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

/// Whether `log` has been closed: each backend says so, the protocol does not.
func isClosed(_ log: any EventLog) -> Bool {
    switch log {
    case let store as EventStore: return store.closed
    case let store as PostgresEventStore: return store.closed
    default: Issue.record("isClosed does not know the backend \(type(of: log))"); return false
    }
}

/// The head signal of `log`, which both backends' subscriptions wait on.
func headSignal(of log: any EventLog) throws -> HeadSignal {
    try #require((log as? any SubscriptionSource)?.headSignal, "\(type(of: log)) is not a subscription source")
}

/// Shorthand for an event with JSON text as data.
func event(_ type: String, _ json: String = "{}", id: UUID? = nil, metadata: String = "") -> NewEvent {
    NewEvent(id: id, type: type, data: Data(json.utf8), metadata: Data(metadata.utf8))
}

// The defaults EventStore offers, for the protocol, under names of their own (the same names
// would compete with the requirements, and on the concrete store with its synchronous reads).
extension EventLog {
    /// ``EventLog/read(from:through:limit:filter:)`` with defaults: the whole log.
    func events(from position: UInt64 = 1, through last: UInt64 = .max, limit: Int = .max, filter: EventFilter = .all) async throws
        -> [RecordedEvent]
    {
        try await read(from: position, through: last, limit: limit, filter: filter)
    }

    /// ``EventLog/readStream(_:from:direction:limit:)`` with defaults: the whole stream, forward.
    func events(of stream: String, from version: UInt64? = nil, direction: ReadDirection = .forward, limit: Int = .max)
        async throws -> [RecordedEvent]
    {
        try await readStream(stream, from: version, direction: direction, limit: limit)
    }

    /// ``EventLog/subscribe(from:filter:)`` with defaults: everything from the start.
    func subscription(from start: SubscriptionStart = .start, filter: EventFilter = .all) -> Subscription {
        subscribe(from: start, filter: filter)
    }
}
