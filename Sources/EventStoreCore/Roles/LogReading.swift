import Foundation

/// Reading the log: by query, by position range, by stream, by id; lazily a page at a time; and
/// following it as it grows (subscriptions, waits for a commit). Every read is one consistent
/// snapshot; positions are global, in commit order, and never reused.
public protocol LogReading: StoreHandle {
    /// Up to `limit` events after `after` that match `query`, and the head to decide from; see
    /// `EventStore.read(_:after:limit:)`.
    func read(_ query: EventQuery, after: UInt64, limit: Int) async throws -> QueryResult

    /// The events ``read(_:after:limit:)`` returns, each handed to `body` as an ``EventView``
    /// in position order, from one snapshot, and the head of that snapshot: a read that copies
    /// nothing out of the store. The views show the events as `read` returns them: one stored
    /// as it reads is handed in place; one whose personal data is opened or that an upcaster
    /// changes, as a view of its changed copy. `body` must not keep a view. Errors as `read`,
    /// and whatever `body` throws, which ends the read. A backend without a way to read in
    /// place gets the default: `read`, then a view of each event.
    func forEachEvent(matching query: EventQuery, after: UInt64, limit: Int, _ body: (EventView) throws -> Void) async throws -> UInt64

    /// The last event at or before `through` that matches `query`, or nil; see
    /// `EventStore.lastEvent(matching:through:)`.
    func lastEvent(matching query: EventQuery, through: UInt64) async throws -> RecordedEvent?

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

    /// The events from `position` through `last` (the head when iteration starts, at most) that
    /// pass `filter`, read lazily a page at a time; see `EventStore.events(from:through:filter:pageSize:)`.
    func events(from position: UInt64, through last: UInt64, filter: EventFilter, pageSize: Int) -> LogEvents

    /// Subscribes to the log from `start` through `filter`, as `EventStore.subscribe(from:filter:)`.
    func subscribe(from start: SubscriptionStart, filter: EventFilter) -> Subscription

    /// Waits until the head is past `position` (committed by any process) and returns it.
    func waitForCommit(after position: UInt64) async throws -> UInt64
}

extension LogReading {
    /// ``read(_:after:limit:)``, then a view of each event.
    public func forEachEvent(
        matching query: EventQuery, after: UInt64, limit: Int, _ body: (EventView) throws -> Void
    ) async throws -> UInt64 {
        let found = try await read(query, after: after, limit: limit)
        for event in found.events { try EventView.withView(of: event, body) }
        return found.head
    }
}
