import CoreMetrics
import Foundation
import Logging

/// How hard a commit works to survive a crash. A process crash (even SIGKILL) loses nothing in any
/// mode once an append has returned, because the data is already in the operating system's page
/// cache; the modes differ in what an operating-system crash or power loss can cost.
public enum Durability: String, Sendable, CaseIterable {
    /// Every commit flushes the data and the meta page to disk before the append returns (two
    /// flushes). An append that returned survives a power loss. The default.
    case full
    /// Every commit flushes the data but not the meta page (`MDB_NOMETASYNC`, one flush). The store
    /// stays consistent, but a power loss may undo the last committed transaction.
    case noMetaSync
    /// Commits do not flush at all (`MDB_NOSYNC`); the operating system writes when it likes. The
    /// store stays consistent on filesystems that keep write order, but a power loss may undo every
    /// transaction since the last flush.
    case noSync
}

/// Options for opening a store of any backend (`EventStore.Configuration` and
/// `PostgresEventStore.Configuration` name it too). Not called `Configuration`, so that it never
/// clashes with another library's type of that name.
public struct StoreConfiguration: Sendable {
    /// What a crash can cost; see ``Durability``.
    public var durability: Durability
    /// The size of the memory map when the store is created or opened, in bytes. The map grows by
    /// itself when it is full, so this only sets where growth starts. At least 1 MiB.
    public var initialMapSize: Int
    /// The clock that stamps each recorded event. Inject a fixed or stepping clock for
    /// deterministic tests and replays.
    public var clock: @Sendable () -> Date
    /// Makes the ids of events appended without one. The default makes time-ordered (version 7)
    /// UUIDs, which keep the id index compact; inject a counter for deterministic tests.
    public var idGenerator: @Sendable () -> UUID
    /// How many events the writer puts in one transaction at most when it commits many appends
    /// together (group commit). A single append is never split.
    public var maximumEventsPerCommit: Int
    /// How often a waiting subscription checks for commits made by other processes. Commits of
    /// this process wake subscribers at once; another process's commit is seen within about one
    /// interval. The check reads LMDB's shared meta page and costs no transaction.
    public var pollInterval: Duration
    /// The clock the poll interval runs on; inject a test clock to drive polling by hand.
    public var pollClock: any Clock<Duration>
    /// How often, at most, the writer clears the reader slots of processes that died while
    /// reading (after a commit, and before it grows the map): such a slot keeps LMDB from
    /// reusing the pages its snapshot may see, so the data file grows instead.
    public var staleReaderCheckInterval: Duration
    /// A commit that takes longer than this is logged (a warning with its time, jobs and events):
    /// a slow disk or a catch-up batch that delays every append behind it.
    public var slowCommitThreshold: Duration
    /// A subscription further than this many positions behind the head is logged once (a
    /// notice), and again when it has caught up: a consumer that cannot keep up.
    public var subscriptionLagNotice: UInt64
    /// How many stored bytes one page of a subscription holds at most (a page holds one event
    /// whatever its size, and at most 256): what a slow subscriber costs in memory, besides the
    /// event its consumer holds. At least 1; 1 MiB by default.
    public var subscriptionPageBytes: Int
    /// Where the store tells what it cannot throw to a caller: the map growing, a transaction
    /// split, a slow commit, dead readers cleared, a subscription far behind, a failed poll for
    /// other processes' commits. Silent by default; the projection runner and the command
    /// handler log through it too unless given their own.
    public var logger: Logger
    /// Where the store's metrics go (appends, events, commit sizes and times, subscriptions and
    /// their lag; see the EventStore documentation's article "Metrics"): nil, the default, uses
    /// the process's `MetricsSystem`, which emits nothing until a program bootstraps a metrics
    /// backend.
    public var metricsFactory: (any MetricsFactory)?
    /// The steps of the event types' schema evolution (see ``Upcaster``): every read path of the
    /// store gives events in their type's newest shape. Checked when the store opens: a gap in a
    /// type's chain makes the open throw ``EventStoreError/Code/invalidInput``. Empty, the default,
    /// reads every event as stored (what `esctl read --as-stored` and `export` do).
    public var upcasters: [Upcaster]

    /// Creates a configuration; every argument has a sensible default.
    public init(
        durability: Durability = .full,
        initialMapSize: Int = 64 << 20,
        clock: @escaping @Sendable () -> Date = { Date() },
        idGenerator: @escaping @Sendable () -> UUID = UUIDv7Generator().next,
        maximumEventsPerCommit: Int = 50_000,
        pollInterval: Duration = .milliseconds(5),
        pollClock: any Clock<Duration> = ContinuousClock(),
        staleReaderCheckInterval: Duration = .seconds(5),
        slowCommitThreshold: Duration = .seconds(1),
        subscriptionLagNotice: UInt64 = 100_000,
        subscriptionPageBytes: Int = 1 << 20,
        logger: Logger = Logger(label: "eventstore", factory: { _ in SwiftLogNoOpLogHandler() }),
        metricsFactory: (any MetricsFactory)? = nil,
        upcasters: [Upcaster] = []
    ) {
        self.durability = durability
        self.initialMapSize = initialMapSize
        self.clock = clock
        self.idGenerator = idGenerator
        self.maximumEventsPerCommit = maximumEventsPerCommit
        self.pollInterval = pollInterval
        self.pollClock = pollClock
        self.staleReaderCheckInterval = staleReaderCheckInterval
        self.slowCommitThreshold = slowCommitThreshold
        self.subscriptionLagNotice = subscriptionLagNotice
        self.subscriptionPageBytes = max(subscriptionPageBytes, 1)
        self.logger = logger
        self.metricsFactory = metricsFactory
        self.upcasters = upcasters
    }
}
