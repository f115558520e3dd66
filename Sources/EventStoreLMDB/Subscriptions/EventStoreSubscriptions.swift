@_spi(Records) import EventStoreCore
import Synchronization

extension EventStore: SubscriptionSource {
    package func readPage(from position: UInt64, limit: Int, byteLimit: Int, scanLimit: Int, filter: EventFilter) throws
        -> (events: [RecordedEvent], scannedThrough: UInt64)
    {
        try readPage(from: position, through: .max, limit: limit, byteLimit: byteLimit, scanLimit: scanLimit, filter: filter)
    }

    package func refreshHead() throws {
        if let head = try commitWatcher.newHead() { headSignal.publish(head) }
    }

    /// Subscribes to the log from `start`, passing only events that match `filter` (one stream,
    /// a category, a set of types). The start position is fixed now: `.end` means events
    /// committed after this call.
    ///
    /// Iterating throws ``EventStoreError`` with ``EventStoreError/Code/closed`` when the store
    /// closes, and ``EventStoreError/Code/damaged`` when a record cannot be decoded.
    public func subscribe(from start: SubscriptionStart = .start, filter: EventFilter = .all) -> Subscription {
        let first: UInt64
        switch start {
        case .start: first = 1
        case let .position(position): first = max(position, 1)
        case .end:
            // Read the head rather than trust the signal: another process may have committed.
            let head = (try? headPosition()) ?? headSignal.current
            headSignal.publish(head)
            first = head + 1
        }
        return Subscription(source: self, firstPosition: first, filter: filter)
    }
}
