@_spi(Records) import EventStoreCore
import Foundation

extension EventStore: EventLog {
    /// The store's directory.
    public var location: String { path }
}

extension EventStore {
    /// The events of the log from position `from` (inclusive, default 1) through `through`
    /// (inclusive, default the head when iteration starts) that pass `filter`, read lazily,
    /// `pageSize` events (at least 1) at a time. See ``LogEvents``.
    public func events(
        from position: UInt64 = 1, through last: UInt64 = .max, filter: EventFilter = .all, pageSize: Int = 256
    ) -> LogEvents {
        LogEvents(
            first: position, last: last, pageSize: pageSize, head: { [self] in try headPosition() },
            readPage: { [self] from, through, limit in
                try readPage(from: from, through: through, limit: limit, scanLimit: limit * 16, filter: filter)
            })
    }
}

extension EventStore: StreamPageReads {
    package func readStream(_ stream: String, from version: UInt64?, direction: ReadDirection, limit: Int, byteLimit: Int) throws
        -> [RecordedEvent]
    {
        var events: [RecordedEvent] = []
        var bytes = 0
        do {
            try forEachEvent(inStream: stream, from: version, direction: direction, limit: limit) { view in
                let size = view.data.count + view.metadata.count
                if !events.isEmpty, size > byteLimit - bytes { throw PageFull() }
                bytes += size
                events.append(view.copy())
            }
        } catch is PageFull {
            // The page is full: the events taken so far are the answer.
        }
        if events.contains(where: { SealedData.isSealed($0.data) }) {
            events = try environment.read { txn in try events.map { try opened($0, txn) } }
        }
        return try environment.upcasting.upcast(events)
    }
}

/// Ends a stream read early from inside its `forEachEvent` closure.
private struct PageFull: Error {}
