/// Reads of one stream bounded in bytes as well as in events: what the server's
/// `GET /streams/{stream}` writes a chunk at a time, so that a page of large events never sits
/// in memory whole. Both backends provide it.
package protocol StreamPageReads: Sendable {
    /// Up to `limit` events of `stream` from version `from` (inclusive; nil: the first, or the
    /// last when backward) in `direction`, as ``EventLog/readStream(_:from:direction:limit:)``
    /// reads them, stopping before an event that would take the stored bytes (data and
    /// metadata) past `byteLimit`: the first event is always taken. Fewer than `limit` events do
    /// not mean the stream ended; an empty answer does.
    func readStream(_ stream: String, from version: UInt64?, direction: ReadDirection, limit: Int, byteLimit: Int) async throws
        -> [RecordedEvent]
}

/// Ends a stream read early from inside its `forEachEvent` closure.
private struct PageFull: Error {}

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
                events.append(view.recordedEvent())
            }
        } catch is PageFull {
            // The page is full: the events taken so far are the answer.
        }
        if events.contains(where: { PersonalEnvelope.isSealed($0.data) }) {
            events = try readTables { txn in try events.map { try opened($0, in: txn) } }
        }
        return try environment.upcasting.upcast(events)
    }
}
