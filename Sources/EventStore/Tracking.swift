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

    public init(name: String, position: UInt64, previous: UInt64? = nil) {
        self.name = name
        self.position = position
        self.previous = previous
    }

    public var description: String { "\(name):\(position)" }

    /// The table that holds every tracking position: name (UTF-8) -> u64 big-endian position.
    /// `docs/FORMAT.md` documents it.
    static let table = "$tracking"

    /// Fails with ``EventStoreError/Code/alreadyProcessed`` when the recorded position is this
    /// one or later, and with ``EventStoreError/Code/invalidInput`` when it is beyond `head`
    /// (the last position before this append: a processor handles events that exist). Writes
    /// nothing: an append checks it first and records it last.
    func check(in tables: TableTransaction, head: UInt64) throws {
        try check(recorded: try Self.recorded(name, in: tables), head: head)
    }

    /// The same check against a recorded position and a head read by the caller (a backend
    /// that keeps tracking positions elsewhere).
    package func check(recorded: UInt64, head: UInt64) throws(EventStoreError) {
        guard position <= head else {
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

    func record(in tables: TableTransaction) throws {
        try tables.put(Self.table, Array(name.utf8), BigEndian.bytes(of: position))
    }

    /// The position recorded for `name`; 0 when none is.
    static func recorded(_ name: String, in tables: TableTransaction) throws -> UInt64 {
        try tables.withValue(table, Array(name.utf8)) { bytes in
            guard bytes.count == 8 else {
                throw EventStoreError(.damaged, "The tracking position of '\(name)' is \(bytes.count) bytes long, not 8; run `esctl verify`.")
            }
            return BigEndian.uint64(bytes)
        } ?? 0
    }
}

extension EventStore {
    /// Appends as ``append(_:)`` does and records `tracking` in the same transaction: a
    /// processor's reaction to the events up to `tracking.position` commits with its tracking
    /// position or not at all. `appends` may be empty (an event that calls for no reaction still
    /// moves the processor on).
    ///
    /// Throws ``EventStoreError/Code/alreadyProcessed`` naming the recorded position when the
    /// processor has recorded `tracking.position` or a later one (checked first: a retry of an
    /// append that committed is refused, not answered as already recorded);
    /// also when `tracking.previous` is no longer the recorded position;
    /// ``EventStoreError/Code/invalidInput`` for a bad name, position 0 or beyond the head, or
    /// a previous position not before it; otherwise as
    /// ``append(_:)``. Nothing is written when it throws.
    @discardableResult
    public func append(_ appends: [StreamAppend], tracking: TrackingPosition) async throws -> [AppendResult] {
        try tracking.validate()
        try await openTables([TrackingPosition.table])
        guard !appends.isEmpty else {
            try await writeTables { tables in
                try tracking.check(in: tables, head: try tables.headPosition())
                try tracking.record(in: tables)
            }
            return []
        }
        return try await append(appends, tracking: tracking, alsoWriting: nil)
    }

    /// The last position `name` has recorded as handled; 0 when it has recorded none.
    /// Throws ``EventStoreError/Code/invalidInput`` for a bad name, and the store's errors.
    public func trackingPosition(of name: String) async throws -> UInt64 {
        try Limits.validateName(name, kind: "processor")
        try await openTables([TrackingPosition.table])
        return try readTables { tables in try TrackingPosition.recorded(name, in: tables) }
    }
}
