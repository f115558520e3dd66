/// Appending to the log: atomic across streams, guarded by expected versions or by a condition on
/// a query, idempotent by event id; and the tracking positions of exactly-once processors, which
/// commit with their appends; and how much this handle has written (a busy writer slows a
/// rebuild down). What a command handler needs to write.
public protocol LogAppending: StoreHandle {
    /// Appends to one or more streams atomically, as `EventStore.append(_:)` does.
    func append(_ appends: [StreamAppend]) async throws -> [AppendResult]

    /// Appends on a condition (dynamic consistency boundary), as `EventStore.append(_:condition:)` does.
    func append(_ appends: [StreamAppend], condition: AppendCondition) async throws -> [AppendResult]

    /// Appends and records a processor's tracking position in the same transaction, as
    /// `EventStore.append(_:tracking:)` does; `appends` may be empty.
    func append(_ appends: [StreamAppend], tracking: TrackingPosition) async throws -> [AppendResult]

    /// Appends on a condition and records a tracking position, both in the same transaction: the
    /// condition is checked as `append(_:condition:)` checks it, then the tracking position as
    /// `append(_:tracking:)` checks it; nothing is written when either fails. `appends` has at
    /// least one event.
    func append(_ appends: [StreamAppend], condition: AppendCondition, tracking: TrackingPosition) async throws -> [AppendResult]

    /// The last position the processor `name` has recorded as handled; 0 when none.
    func trackingPosition(of name: String) async throws -> UInt64

    /// How much this handle has written since it opened.
    var writerStatistics: WriterStatistics { get }
}
