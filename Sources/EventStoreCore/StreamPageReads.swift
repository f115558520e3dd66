/// Reads of one stream bounded in bytes as well as in events: what the server's
/// `GET /streams/{stream}` writes a chunk at a time, so that a page of large events never sits
/// in memory whole. Both backends provide it.
package protocol StreamPageReads: Sendable {
    /// Up to `limit` events of `stream` from version `from` (inclusive; nil: the first, or the
    /// last when backward) in `direction`, as ``LogReading/readStream(_:from:direction:limit:)``
    /// reads them, stopping before an event that would take the stored bytes (data and
    /// metadata) past `byteLimit`: the first event is always taken. Fewer than `limit` events do
    /// not mean the stream ended; an empty answer does.
    func readStream(_ stream: String, from version: UInt64?, direction: ReadDirection, limit: Int, byteLimit: Int) async throws
        -> [RecordedEvent]
}

