@_spi(Records) import EventStoreCore
import Foundation

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
                try await tracking.check(in: tables, head: try await tables.headPosition())
                try await tracking.record(in: tables)
            }
            return []
        }
        return try await append(appends, tracking: tracking, alsoWriting: nil)
    }

    /// Appends on `condition` and records `tracking`, in one transaction: as
    /// ``append(_:condition:)`` and ``append(_:tracking:)`` would each, and nothing is written
    /// when either refuses. `appends` must hold at least one event. Errors as those two.
    @discardableResult
    public func append(_ appends: [StreamAppend], condition: AppendCondition, tracking: TrackingPosition) async throws -> [AppendResult] {
        try tracking.validate()
        try condition.failIfEventsMatch.validate()
        try await openTables([TrackingPosition.table])
        return try await append(appends, tracking: tracking, alsoWriting: nil, condition: condition)
    }

    /// The last position `name` has recorded as handled; 0 when it has recorded none.
    /// Throws ``EventStoreError/Code/invalidInput`` for a bad name, and the store's errors.
    public func trackingPosition(of name: String) async throws -> UInt64 {
        try Limits.validateName(name, kind: "processor")
        try await openTables([TrackingPosition.table])
        return try await readTables { tables in try await TrackingPosition.recorded(name, in: tables) }
    }
}
