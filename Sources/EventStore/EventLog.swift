import Foundation

/// What an event store offers, whichever database keeps it: the LMDB ``EventStore`` (embedded,
/// one machine) and `PostgresEventStore` of the EventStorePostgres product (many processes on
/// many hosts) both conform, with the same semantics, limits and error codes, proven by one
/// conformance suite.
///
/// - Positions are global, in commit order and never reused: no reader ever sees position P+1
///   before P. They are gapless but for the holes deletions leave (each recorded by a
///   `$StreamDeleted` event, see ``StreamDeletion``).
/// - Appends are atomic across streams, guarded by expected versions, and idempotent by event id
///   forever: the same ids and content again return the original positions and write nothing.
/// - A subscription delivers the log in position order, catch-up then live, with no gap and no
///   duplicate, including appends made by other processes.
///
/// Errors are ``EventStoreError``s with the codes each method of ``EventStore`` documents.
/// Requirements take every argument; ``EventStore`` also offers them with defaults.
public protocol EventLog: AnyObject, Sendable {
    /// Where the store is, fit for messages: a directory, or a database URL without its password.
    var location: String { get }

    /// The configuration the store was opened with (its clock, id generator and logger).
    var configuration: Configuration { get }

    /// How the store was opened (``OpenMode/readOnly`` refuses every write).
    var mode: OpenMode { get }

    /// How much this handle has written since it opened.
    var writerStatistics: WriterStatistics { get }

    /// Appends to one or more streams atomically, as ``EventStore/append(_:)`` does.
    func append(_ appends: [StreamAppend]) async throws -> [AppendResult]

    /// Appends on a condition (dynamic consistency boundary), as ``EventStore/append(_:condition:)`` does.
    func append(_ appends: [StreamAppend], condition: AppendCondition) async throws -> [AppendResult]

    /// Up to `limit` events after `after` that match `query`, and the head to decide from; see
    /// ``EventStore/read(_:after:limit:)``.
    func read(_ query: EventQuery, after: UInt64, limit: Int) async throws -> QueryResult

    /// The last event at or before `through` that matches `query`, or nil; see
    /// ``EventStore/lastEvent(matching:through:)``.
    func lastEvent(matching query: EventQuery, through: UInt64) async throws -> RecordedEvent?

    /// Appends and records a processor's tracking position in the same transaction, as
    /// ``EventStore/append(_:tracking:)`` does; `appends` may be empty.
    func append(_ appends: [StreamAppend], tracking: TrackingPosition) async throws -> [AppendResult]

    /// The last position the processor `name` has recorded as handled; 0 when none.
    func trackingPosition(of name: String) async throws -> UInt64

    /// Up to `limit` events of the log from `position` through `last` (inclusive) that pass
    /// `filter`, in position order, from one snapshot.
    func read(from position: UInt64, through last: UInt64, limit: Int, filter: EventFilter) async throws -> [RecordedEvent]

    /// Up to `limit` events of `stream` from version `version` (nil: the first, or the last when
    /// backward) in `direction`.
    func readStream(_ stream: String, from version: UInt64?, direction: ReadDirection, limit: Int) async throws
        -> [RecordedEvent]

    /// The event at `position`, or nil.
    func event(at position: UInt64) async throws -> RecordedEvent?

    /// The event recorded with `id`, or nil.
    func event(withID id: UUID) async throws -> RecordedEvent?

    /// The last position of the log; 0 when it is empty.
    func headPosition() async throws -> UInt64

    /// The version of `stream`'s last event; 0 when it has none.
    func streamVersion(_ stream: String) async throws -> UInt64

    /// Deletes a stream's events (soft, or hard with a tombstone); see ``EventStore/deleteStream(_:expectedVersion:hard:)``.
    func deleteStream(_ stream: String, expectedVersion: ExpectedVersion, hard: Bool) async throws -> StreamDeletion

    /// Sets a stream's retention policy; see ``EventStore/setRetention(_:for:)``.
    func setRetention(_ policy: RetentionPolicy, for stream: String) async throws

    /// Applies every stream's retention policy now; see ``EventStore/purge()``.
    func purge() async throws -> [StreamDeletion]

    /// What the store knows of a stream (versions, event count, tombstone, policy); nil when it
    /// never had an event.
    func streamInfo(_ stream: String) async throws -> StreamInfo?

    /// Counts and sizes, from one snapshot.
    func statistics() async throws -> StoreStatistics

    /// Checks the backend's own invariants (gapless positions, indexes that agree with the log,
    /// checksums) and reports every problem found.
    func verify() async throws -> VerificationReport

    /// The events from `position` through `last` (the head when iteration starts, at most) that
    /// pass `filter`, read lazily a page at a time; see ``EventStore/events(from:through:filter:pageSize:)``.
    func events(from position: UInt64, through last: UInt64, filter: EventFilter, pageSize: Int) -> LogEvents

    /// Subscribes to the log from `start` through `filter`, as ``EventStore/subscribe(from:filter:)``.
    func subscribe(from start: SubscriptionStart, filter: EventFilter) -> Subscription

    /// Finishes queued appends and closes; later calls throw ``EventStoreError/Code/closed``.
    func close()

    // MARK: Tables beside the log

    /// Opens the named tables, creating those that do not exist yet; see ``EventStore/openTables(_:)``.
    func openTables(_ names: [String]) async throws

    /// Which of the named tables exist, without creating any.
    func existingTables(_ names: [String]) async throws -> [String]

    /// Runs `body` in one read snapshot of the tables and the log; see ``EventStore/readTables(_:)``.
    /// Synchronous, as folds are: on PostgreSQL it blocks its thread for the round trips.
    func readTables<T>(_ body: (TableTransaction) throws -> T) throws -> T

    /// Runs `body` in a write transaction of the tables, serialised with every other table write
    /// of every process; see ``EventStore/writeTables(_:)``.
    func writeTables<T: Sendable>(_ body: @escaping @Sendable (TableTransaction) throws -> T) async throws -> T

    /// Appends, and when the events are newly written runs `body` in the same transaction; see
    /// ``EventStore/append(_:alsoWriting:)``.
    func append(
        _ appends: [StreamAppend], alsoWriting body: @escaping @Sendable (TableTransaction, [AppendResult]) throws -> Void
    ) async throws -> [AppendResult]

    /// Waits until the head is past `position` (committed by any process) and returns it.
    func waitForCommit(after position: UInt64) async throws -> UInt64

    // MARK: Who owns long-running work

    /// A positive number that names this handle to every other handle of the store, in this
    /// process or another, on this host or another, while it is open. Long-running work recorded
    /// in the store (a shadow rebuild) keeps it, so that others can tell, with
    /// ``isOwnerAlive(_:)``, whether its owner is still at it or died.
    var ownerID: Int64 { get }

    /// Whether the handle that recorded `owner` (its ``ownerID``) still has the store open.
    /// LMDB: a living process of that id on this host (an LMDB store is not shared across
    /// hosts). PostgreSQL: a session of any host holding the owner's advisory lock. Throws when
    /// the backend cannot be asked.
    func isOwnerAlive(_ owner: Int64) async throws -> Bool
}

extension EventLog {
    /// Appends `events` to `stream` if its version satisfies `expectedVersion`.
    public func append(
        to stream: String, events: [NewEvent], expectedVersion: ExpectedVersion = .any
    ) async throws -> AppendResult {
        let results = try await append([StreamAppend(stream: stream, events: events, expectedVersion: expectedVersion)])
        return results[0]
    }
}

extension EventStore: EventLog {
    /// The store's directory.
    public var location: String { path }
}
