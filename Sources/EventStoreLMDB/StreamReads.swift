@_spi(Records) import EventStoreCore
import CLMDB
import Foundation

extension EventStore {
    /// Reads up to `limit` events of `stream` starting at version `from` (inclusive) and moving
    /// in `direction`. Forward reads start at version 1 when `from` is nil; backward reads start
    /// at the stream's last version. A stream with no events gives an empty array.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/invalidInput`` for a negative limit,
    /// ``EventStoreError/Code/damaged`` when a record cannot be decoded,
    /// ``EventStoreError/Code/closed`` after `close()`.
    public func readStream(
        _ stream: String, from version: UInt64? = nil, direction: ReadDirection = .forward, limit: Int = .max
    ) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        events.reserveCapacity(min(limit, 256))
        try forEachEvent(inStream: stream, from: version, direction: direction, limit: limit) { view in
            events.append(view.copy())
        }
        if events.contains(where: { SealedData.isSealed($0.data) }) {
            events = try environment.read { txn in try events.map { try opened($0, txn) } }
        }
        return try environment.upcasting.upcast(events)
    }

    /// Calls `body` with each of up to `limit` events of `stream`, as ``readStream(_:from:direction:limit:)``
    /// would return them but as stored (personal data sealed, and no upcaster runs on a view: its ``EventView/schemaVersion``
    /// says which shape its data has), read in place in one snapshot: nothing is copied unless
    /// `body` copies it, so this is the fast way to look at events that are not kept. Returns how
    /// many events `body` took.
    ///
    /// `body` runs inside a read transaction, holding the store's read side:
    /// - it must not keep the ``EventView`` (copy what it needs: the view's buffers are gone when
    ///   `body` returns);
    /// - it must not call the store (nor close it): a nested read could wait forever behind a
    ///   writer that waits for this one, when the map grows;
    /// - it should be short: while it runs, the map cannot grow (appends that need it wait) and
    ///   the snapshot's pages cannot be reused (the file grows instead).
    ///
    /// Throws what `body` throws, unchanged, as soon as it throws (which is the way to stop
    /// early), and ``EventStoreError`` as ``readStream(_:from:direction:limit:)`` does; when a
    /// damaged record is met, `body` has already taken the events before it.
    @discardableResult
    public func forEachEvent(
        inStream stream: String, from version: UInt64? = nil, direction: ReadDirection = .forward, limit: Int = .max,
        _ body: (EventView) throws -> Void
    ) throws -> Int {
        guard limit >= 0 else {
            throw EventStoreError(.invalidInput, "The limit is negative; give 0 or more.")
        }
        let databases = environment.databases
        // The store's read path wraps every error it sees; the caller's own errors go back as they are.
        var bodyError: (any Error)?
        let seen = try environment.read { txn -> Int in
            guard limit > 0, let head = try Self.streamHead(stream, txn, databases) else { return 0 }
            let start: UInt64
            switch direction {
            case .forward: start = max(version ?? 1, head.state.first, 1)
            case .backward: start = min(version ?? head.version, head.version)
            }
            // Versions before the first kept one were deleted.
            guard start >= max(head.state.first, 1), start <= head.version else { return 0 }
            var seen = 0
            try Self.forEachPosition(of: head, stream: stream, from: start, direction: direction, limit: limit, txn, databases) { position in
                let record = try Self.indexedRecord(at: position, of: stream, txn, databases)
                do {
                    try body(EventView(position: position, record: record, knownStream: stream))
                } catch {
                    bodyError = error
                    return false
                }
                seen += 1
                return true
            }
            return seen
        }
        if let bodyError { throw bodyError }
        return seen
    }

    /// The record at `position`, which `stream`'s index names as one of its versions, in place.
    /// Throws ``EventStoreError/Code/damaged`` when the log lacks it or it is another stream's.
    static func indexedRecord(at position: UInt64, of stream: String, _ txn: Transaction, _ databases: Databases) throws -> RecordView {
        guard let value = try BigEndian.withBytes(of: position, { try txn.get(databases.events, $0) }) else {
            throw EventStoreError(.damaged, "The stream index points to position \(position), which is not in the log; run `esctl verify`.")
        }
        let record = try RecordView(value, position: position)
        try record.checkBelongs(to: stream, at: position)
        return record
    }

    /// Calls `body` with the positions of a stream's versions from `start` (which exists) in
    /// `direction`, at most `limit` of them, while it returns true: from the index's full
    /// chunks, then from the head's pending positions. Never goes below the first version a
    /// deletion kept.
    static func forEachPosition(
        of head: StreamHead, stream: String, from start: UInt64, direction: ReadDirection, limit: Int,
        _ txn: Transaction, _ databases: Databases, _ body: (UInt64) throws -> Bool
    ) throws {
        let firstPending = head.firstPendingVersion
        var count = 0
        var going = true
        func visit(_ position: UInt64) throws {
            count += 1
            going = try body(position)
        }
        func more() -> Bool { going && count < limit }
        func missing(_ version: UInt64) -> EventStoreError {
            EventStoreError(.damaged, "The stream index lacks version \(version) of '\(stream)'; run `esctl verify`.")
        }
        let floor = max(head.state.first, 1)
        var version = direction == .forward ? max(start, floor) : start
        switch direction {
        case .forward:
            if version < firstPending {
                let cursor = try txn.cursor(databases.streamIndex)
                var entry = try BigEndian.withIndexKey(stream: head.number, version: StreamHead.chunkStart(of: version)) {
                    try cursor.seek(atLeast: $0)
                }
                while more(), version < firstPending {
                    guard let (key, value) = entry, key.count == 16, BigEndian.uint64(key) == head.number,
                        BigEndian.uint64(key, at: 8) == StreamHead.chunkStart(of: version), value.count == 8 * Schema.indexChunk
                    else { throw missing(version) }
                    var offset = Int(version - BigEndian.uint64(key, at: 8))
                    while offset < Schema.indexChunk, more() {
                        try visit(BigEndian.uint64(value, at: 8 * offset))
                        offset += 1
                        version += 1
                    }
                    if more() { entry = try cursor.next() }
                }
            }
            while more(), version <= head.version {
                try visit(head.pending[Int(version - firstPending)])
                version += 1
            }
        case .backward:
            while more(), version >= firstPending, version >= floor {
                try visit(head.pending[Int(version - firstPending)])
                version -= 1
            }
            if more(), version >= floor {
                let cursor = try txn.cursor(databases.streamIndex)
                var entry = try BigEndian.withIndexKey(stream: head.number, version: StreamHead.chunkStart(of: version)) {
                    try cursor.get(MDB_SET_KEY, key: $0)
                }
                while more(), version >= floor {
                    guard let (key, value) = entry, key.count == 16, BigEndian.uint64(key) == head.number,
                        BigEndian.uint64(key, at: 8) == StreamHead.chunkStart(of: version), value.count == 8 * Schema.indexChunk
                    else { throw missing(version) }
                    var offset = Int(version - BigEndian.uint64(key, at: 8))
                    while offset >= 0, more(), version >= floor {
                        try visit(BigEndian.uint64(value, at: 8 * offset))
                        offset -= 1
                        version -= 1
                    }
                    entry = more() && version >= floor ? try cursor.previous() : nil
                }
            }
        }
    }
}
