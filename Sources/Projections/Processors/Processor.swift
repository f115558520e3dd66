import EventStoreCore

/// A processor (a policy, a process manager): reacts to events by appending new ones, exactly
/// once. Its reactions and its tracking position (the last position it handled) commit in one
/// transaction, and an append whose tracking position is not beyond the recorded one is refused,
/// so a processor restarted after a crash, or two instances of it racing, never react twice.
///
/// ```swift
/// struct ThankYouNotes: Processor {
///     let name = "thank-you-notes"
///     let eventTypes: Set<String>? = ["OrderPlaced"]
///     func react(to event: RecordedEvent) throws -> [StreamAppend] {
///         [StreamAppend(stream: "notes-\(event.stream)", events: [NewEvent(type: "NoteDue", data: event.data)])]
///     }
/// }
/// ```
public protocol Processor: Sendable {
    /// The processor's name, under which its tracking position is recorded (the rules of stream names).
    var name: String { get }
    /// The event types it reacts to; nil for every event.
    var eventTypes: Set<String>? { get }
    /// The appends that react to `event` (none when it calls for nothing). Like a projection's
    /// `apply` it should use nothing but the event: it may run again for the same event when the
    /// commit of its reaction failed. Throwing stops the processor before the event.
    func react(to event: RecordedEvent) throws -> [StreamAppend]
}

/// Runs processors: reads the events after each one's tracking position, and commits their
/// reactions with the new tracking position, a batch of events at a time.
public struct ProcessorRunner: Sendable {
    public let store: any LogAppending & LogReading
    /// How many handled events one transaction covers at most.
    public let batchSize: Int

    public init(store: any LogAppending & LogReading, batchSize: Int = 256) {
        self.store = store
        self.batchSize = max(1, batchSize)
    }

    /// Handles every event up to the head that `processor` has not handled, and returns its
    /// tracking position. An instance that loses a race to another (its append is refused as
    /// already processed) reads the recorded position again and goes on from there.
    ///
    /// Throws ``ProjectionError/Code/stopped`` naming the event when `react` throws or its
    /// reaction cannot be appended (nothing of that batch is written), and the store's errors.
    @discardableResult
    public func catchUp(_ processor: any Processor) async throws -> UInt64 {
        var tracked = try await store.trackingPosition(of: processor.name)
        while true {
            try Task.checkCancellation()
            let events = try await store.read(
                from: tracked + 1, through: .max, limit: batchSize, filter: EventFilter(types: processor.eventTypes))
            guard let last = events.last else { return tracked }
            var appends: [StreamAppend] = []
            var count = 0
            var through = tracked
            for event in events {
                let reaction: [StreamAppend]
                do {
                    reaction = try processor.react(to: event)
                } catch {
                    // The reactions so far commit; the processor stops before this event.
                    if through > tracked { _ = try await commit(appends, processor, after: tracked, through: through) }
                    throw ProjectionError.processorStopped(processor.name, at: event.position, cause: "\(error)")
                }
                let size = reaction.reduce(0) { $0 + $1.events.count }
                if count + size > Limits.maximumEventsPerAppend && through > tracked {
                    break  // the rest goes in the next transaction
                }
                appends += reaction
                count += size
                through = event.position
            }
            tracked = try await commit(appends, processor, after: tracked, through: through == tracked ? last.position : through)
        }
    }

    /// Commits `appends`, the reactions to the events after `previous` through `position`, with
    /// `position` as the processor's tracking position, on condition that `previous` is still
    /// the recorded one; when another instance got there first, returns the recorded position.
    private func commit(_ appends: [StreamAppend], _ processor: any Processor, after previous: UInt64, through position: UInt64) async throws -> UInt64 {
        do {
            _ = try await store.append(
                appends.filter { !$0.events.isEmpty }, tracking: TrackingPosition(name: processor.name, position: position, previous: previous))
            return position
        } catch EventStoreError.Code.alreadyProcessed {
            return try await store.trackingPosition(of: processor.name)
        } catch let error as EventStoreError
            where error.code != .closed && error.code != .storageFull && error.code != .storeUnavailable && error.code != .outcomeUnknown
        {
            // (An outcome unknown passes as it is: whether the reaction was written is what it cannot say.)
            throw ProjectionError.processorStopped(processor.name, at: position, cause: error.message)
        }
    }
}
