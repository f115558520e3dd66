import Foundation

/// A processor's tracking position: the last log position it has handled, recorded in the same
/// transaction as the events it appended in reaction, so that a processor restarted after a
/// crash handles every event exactly once.
public struct TrackingPosition: Sendable, Equatable, CustomStringConvertible {
    /// The processor's name (the rules of stream names).
    public let name: String
    /// The last position handled.
    public let position: UInt64
    /// For a reaction to several events: the recorded position it started after, which must
    /// still be the recorded one (another instance may have handled some of those events
    /// meanwhile). Nil: only `position` is checked, which suffices for one event at a time.
    public let previous: UInt64?
    /// True when the position is one of another source (an upstream log, a queue), not of this
    /// log: it is then not bounded by this log's head. False (the default): a processor of this
    /// log, which handles events that exist.
    public let isUpstream: Bool

    public init(name: String, position: UInt64, previous: UInt64? = nil, upstream: Bool = false) {
        self.name = name
        self.position = position
        self.previous = previous
        self.isUpstream = upstream
    }

    public var description: String { "\(name):\(position)" }

    /// The table that holds every tracking position: name (UTF-8) -> u64 big-endian position.
    /// `docs/FORMAT.md` documents it.
    package static let table = "$tracking"

    /// Fails with ``EventStoreError/Code/alreadyProcessed`` when the recorded position is this
    /// one or later, and with ``EventStoreError/Code/invalidInput`` when it is beyond `head` (and
    /// not ``isUpstream``)
    /// (the last position before this append: a processor handles events that exist). Writes
    /// nothing: an append checks it first and records it last.
    package func check(in tables: TableTransaction, head: UInt64) async throws {
        try check(recorded: try await Self.recorded(name, in: tables), head: head)
    }

    /// The same check against a recorded position and a head read by the caller (a backend
    /// that keeps tracking positions elsewhere).
    package func check(recorded: UInt64, head: UInt64) throws(EventStoreError) {
        guard isUpstream || position <= head else {
            throw EventStoreError(
                .invalidInput,
                "The tracking position \(position) of '\(name)' is beyond the head of the log (\(head)): a processor records the position of an event it handled; nothing was written.")
        }
        guard position > recorded else {
            throw EventStoreError(
                .alreadyProcessed,
                "'\(name)' has already recorded position \(recorded), so position \(position) was handled before; nothing was written.")
        }
        if let previous, previous != recorded {
            throw EventStoreError(
                .alreadyProcessed,
                "'\(name)' has recorded position \(recorded) since this reaction started after \(previous), so some of its events were handled meanwhile; nothing was written.")
        }
    }

    /// Refuses a tracking position that no store could record: a bad name, position 0, or a
    /// previous position not before it.
    package func validate() throws(EventStoreError) {
        try Limits.validateName(name, kind: "processor")
        guard position > 0 else {
            throw EventStoreError(.invalidInput, "A tracking position is the position of an event handled, 1 or more; 0 was given.")
        }
        if let previous, previous >= position {
            throw EventStoreError(
                .invalidInput, "A tracking position (\(position)) must be beyond the previous one it started after (\(previous)).")
        }
    }

    package func record(in tables: TableTransaction) async throws {
        try await tables.put(Self.table, Array(name.utf8), BigEndian.bytes(of: position))
    }

    /// The position recorded for `name`; 0 when none is.
    package static func recorded(_ name: String, in tables: TableTransaction) async throws -> UInt64 {
        try await tables.withValue(table, Array(name.utf8)) { bytes in try recorded(name, from: bytes) } ?? 0
    }

    /// The position recorded for `name`, from its row's bytes.
    package static func recorded(_ name: String, from bytes: UnsafeRawBufferPointer) throws(EventStoreError) -> UInt64 {
        guard bytes.count == 8 else {
            throw EventStoreError(.damaged, "The tracking position of '\(name)' is \(bytes.count) bytes long, not 8; run `esctl verify`.")
        }
        return BigEndian.uint64(bytes)
    }
}
