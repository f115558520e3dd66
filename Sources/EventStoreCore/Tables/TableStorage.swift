import Foundation

/// What a backend does for a ``TableTransaction``: the table and log operations of one of its
/// transactions. ``TableTransaction`` checks validity, writability and keys before calling.
///
/// The operations are async, so a backend that reads over the network (PostgreSQL) never blocks
/// a thread; a backend whose reads are memory reads (LMDB) implements them synchronously. The
/// closures over bytes stay synchronous: the bytes are valid only during each call.
package protocol TableStorage: AnyObject {
    /// The value under `key` when this storage can read it without waiting (`.some(nil)`: there
    /// is none); nil when it must be read with ``withValue(_:_:_:)``. A synchronous fold reads
    /// rows through it (see the projections' `ProjectionState`).
    func valueAtHand(_ table: String, _ key: [UInt8]) throws -> [UInt8]??
    /// Whether ``valueAtHand(_:_:)`` always has the value.
    var rowsAtHand: Bool { get }
    func withValue<R>(_ table: String, _ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) async throws -> R?
    func put(_ table: String, _ key: [UInt8], _ value: [UInt8]) async throws
    func delete(_ table: String, _ key: [UInt8]) async throws -> Bool
    func removeAll(_ table: String) async throws
    func count(_ table: String) async throws -> Int
    func scan(
        _ table: String, prefix: [UInt8], after: [UInt8]?, reverse: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) async throws
    func releaseReadPages()
    func headPosition() async throws -> UInt64
    /// The clock that processes on several hosts share (see ``TableTransaction/sharedClock()``);
    /// nil, by default, for a backend whose processes share one machine's clock.
    func sharedClock() async throws -> Date?
    /// How many deletions (with `trimsOnly`, trims by retention) removed events of `type` (nil:
    /// any); 0 on a backend without deletions.
    func deletionCount(ofType type: String?, trimsOnly: Bool) async throws -> UInt64
    /// The version of the stream's last event, deleted or not; 0 for a stream never written.
    func streamVersion(_ stream: String) async throws -> UInt64
    func forEachEvent(inStream stream: String, from version: UInt64, _ body: (RecordedEvent) async throws -> Void) async throws
    /// Up to `limit` events from `start` through `last` (`start` at least 1) whose type is in
    /// `types` (every event when nil), in position order, and the last position examined: the
    /// last event's when the page is full, else `last` or the head, whichever is lower (`start -
    /// 1` when there was nothing to examine). A page at a time, so that a backend reads it in
    /// one go (LMDB: one cursor walk, no suspension per event; PostgreSQL: one round trip).
    func eventPage(from start: UInt64, through last: UInt64, types: Set<String>?, limit: Int) async throws
        -> (events: [RecordedEvent], examined: UInt64)
    /// Hands the events from `start` through `last` whose type is in `types` (every event when
    /// nil) to `body` in position order, read in place as stored (sealed, not upcast), with no
    /// suspension, until `body` returns false; returns the position where it stopped, or the last
    /// examined (`start - 1` when there was none). Nil when this storage cannot read in place
    /// (its events come over the network): the caller reads pages (``eventPage(from:through:types:limit:)``).
    func forEachRecordAtHand(from start: UInt64, through last: UInt64, types: Set<String>?, _ body: (EventView) throws -> Bool) throws
        -> UInt64?
}

extension TableStorage {
    /// An embedded backend's processes share one machine: their store's clock decides.
    package func sharedClock() async throws -> Date? { nil }
}
