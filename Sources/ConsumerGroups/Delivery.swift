import EventStoreCore

/// One event handed to one member of a group: settle it once, with ``acknowledge()`` (or one of
/// its forms that commit the member's own writes with it) or ``nack(_:)``. Until it is settled
/// its partition waits; a member that never settles it (it died) loses the partition when its
/// lease runs out, and the next holder receives the event again.
public struct Delivery: Sendable {
    /// The event, as the store's reads give it.
    public let event: RecordedEvent
    /// The partition its key hashes into.
    public let partition: Int
    /// Which try this is: 1, then one more after each failed try.
    public let attempt: Int
    /// Whether it is a parked event delivered again (``ConsumerGroups/replayParked(_:position:)``).
    public let isReplay: Bool
    let member: MemberCore

    /// Settles the delivery as handled. Throws ``ConsumerGroupError/Code/leaseLost`` when the
    /// member no longer holds the partition (nothing is recorded; the next holder delivers the
    /// event again), ``ConsumerGroupError/Code/alreadySettled`` when it was settled before.
    public func acknowledge() async throws {
        _ = try await member.settle(self, .acknowledge, alsoWriting: nil)
    }

    /// Settles the delivery as handled and runs `body` in the same transaction of the store's
    /// tables: what it writes (a projection's rows) commits with the acknowledgement or not at
    /// all, so its effect happens exactly once. Errors as ``acknowledge()``, and `body`'s own.
    public func acknowledge(alsoWriting body: @escaping @Sendable (TableTransaction) async throws -> Void) async throws {
        _ = try await member.settle(self, .acknowledge, alsoWriting: body)
    }

    /// Appends `appends` and settles the delivery as handled in the same transaction: the new
    /// events commit with the acknowledgement or not at all. Give the events ids (derived from
    /// the event delivered) so that a delivery repeated after a lost lease appends nothing twice.
    /// Errors as ``acknowledge()`` and as the store's append.
    public func acknowledge(appending appends: [StreamAppend]) async throws -> [AppendResult] {
        try await member.acknowledge(self, appending: appends)
    }

    /// Settles the delivery as not handled: retry it later (at the member's next poll; parked
    /// once it failed ``GroupDefinition/maxTries`` times), park it with a reason, or skip it.
    /// Returns what was recorded. Errors as ``acknowledge()``.
    @discardableResult
    public func nack(_ action: NackAction) async throws -> Settlement {
        switch action {
        case .retry: return try await member.settle(self, .retry, alsoWriting: nil)
        case let .park(reason): return try await member.settle(self, .park(reason), alsoWriting: nil)
        case .skip: return try await member.settle(self, .skip, alsoWriting: nil)
        }
    }
}

/// What to do with a delivery that was not handled.
public enum NackAction: Sendable, Equatable {
    /// Deliver it again later (parked after the group's maximum tries).
    case retry
    /// Park it now, with the reason.
    case park(reason: String)
    /// Pass over it, as if handled.
    case skip
}

/// What settling a delivery recorded.
public enum Settlement: Sendable, Equatable {
    case acknowledged
    /// It will be delivered again; `tries` failed so far.
    case retried(tries: Int)
    /// It was parked, for this reason.
    case parked(reason: String)
    case skipped
}
