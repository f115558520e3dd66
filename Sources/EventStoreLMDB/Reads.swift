@_spi(Records) import EventStoreCore
import CLMDB
import Foundation

extension EventStore {
    /// Reads up to `limit` events of the whole log that pass `filter`, starting at position `from`
    /// (inclusive, default 1) and ending at `through` (inclusive, default the head), in position
    /// order, in one snapshot. The limit has no default: to go through a range of any size, use
    /// ``events(from:through:filter:pageSize:)``, which reads it a page at a time.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/invalidInput`` for a negative limit,
    /// ``EventStoreError/Code/damaged`` when a record cannot be decoded,
    /// ``EventStoreError/Code/closed`` after `close()`.
    public func read(
        from position: UInt64 = 1, through last: UInt64 = .max, limit: Int, filter: EventFilter = .all
    ) throws -> [RecordedEvent] {
        guard limit >= 0 else {
            throw EventStoreError(.invalidInput, "The limit is negative; give 0 or more.")
        }
        let databases = environment.databases
        let upcasting = environment.upcasting
        let compiled = upcasting.recordedFilter(filter).compiled
        return try environment.read { txn in
            var events: [RecordedEvent] = []
            var interner = StringInterner(capacity: 64)
            guard limit > 0, position <= last else { return events }
            let cursor = try txn.cursor(databases.events)
            var entry = try BigEndian.withBytes(of: max(position, 1)) { try cursor.seek(atLeast: $0) }
            while let (key, value) = entry, events.count < limit {
                let current = try Self.position(of: key)
                if current > last { break }
                let view = try RecordView(value, position: current)
                if compiled.matches(view),
                    let event = try upcasting.upcast(opened(view.recordedEvent(at: current, interner: &interner), txn), wanting: filter.types)
                {
                    events.append(event)
                }
                entry = try cursor.next()
            }
            return events
        }
    }

    /// Reads from `position` until `limit` events pass `filter`, or the next match would take
    /// the page's stored bytes (data and metadata) past `byteLimit` (the first match is always taken), or
    /// `scanLimit` records were examined, or the log ends (or passes `last`). `scannedThrough` is
    /// the last position examined (`position - 1` when there was nothing), so the caller can go
    /// on after it.
    package func readPage(
        from position: UInt64, through last: UInt64, limit: Int, byteLimit: Int = .max, scanLimit: Int, filter: EventFilter
    ) throws -> (events: [RecordedEvent], scannedThrough: UInt64) {
        let databases = environment.databases
        let upcasting = environment.upcasting
        let compiled = upcasting.recordedFilter(filter).compiled
        var scannedBytes = 0
        defer { environment.noteScanned(bytes: scannedBytes) }
        return try environment.read { txn in
            var events: [RecordedEvent] = []
            var interner = StringInterner(capacity: 64)
            var scannedThrough = position - 1
            var examined = 0
            var pageBytes = 0
            let cursor = try txn.cursor(databases.events)
            var entry = try BigEndian.withBytes(of: position) { try cursor.seek(atLeast: $0) }
            while let (key, value) = entry {
                let current = try Self.position(of: key)
                if current > last {
                    // Holes a deletion left may end the range: it was scanned through `last`.
                    scannedThrough = last
                    break
                }
                let view = try RecordView(value, position: current)
                if compiled.matches(view) {
                    // A match that does not fit ends the page before it: the next page starts there.
                    let size = view.dataBytes.count + view.metadataBytes.count
                    if !events.isEmpty, size > byteLimit - pageBytes { break }
                    if let event = try upcasting.upcast(
                        opened(view.recordedEvent(at: current, interner: &interner), txn), wanting: filter.types)
                    {
                        events.append(event)
                        pageBytes += size
                    }
                }
                scannedBytes += value.count
                scannedThrough = current
                examined += 1
                if events.count >= limit || examined >= scanLimit { break }
                entry = try cursor.next()
            }
            return (events, scannedThrough)
        }
    }

    /// Up to `limit` events recorded after `after` (exclusive; 0: the whole log) that match
    /// `query`, in position order, and the head of the log, from one snapshot: what a decision
    /// reads before a conditional append (``append(_:condition:)``) with the same query after
    /// that head. Goes through the tag and type indexes: a seek per tag or type of each item.
    ///
    /// Events are matched as recorded (their stored type, before upcasting), then returned as
    /// every read returns them. Throws ``EventStoreError/Code/invalidInput`` for a negative limit
    /// or a query ``EventQuery/validate()`` refuses, ``EventStoreError/Code/damaged`` when an
    /// index and the log disagree.
    public func read(_ query: EventQuery, after: UInt64 = 0, limit: Int = 10_000) throws -> QueryResult {
        try Self.checkQueryRead(query, limit: limit)
        let databases = environment.databases
        return try environment.read { txn in
            let head = try Writer.lastPosition(txn, databases)
            var events: [RecordedEvent] = []
            try Self.forEachMatch(of: query, after: after, limit: limit, txn, databases) { record, position in
                events.append(try environment.upcasting.upcast(opened(record.recordedEvent(at: position), txn)))
            }
            return QueryResult(events: events, head: head)
        }
    }

    /// The events ``read(_:after:limit:)`` returns, each handed to `body` in place (a view into
    /// the map; an event whose personal data is opened or that an upcaster changes, a view of
    /// its changed copy), in position order, from one snapshot; returns that snapshot's head.
    /// `body` runs inside the read transaction: it must be quick and must not keep a view.
    /// Errors as `read`, and whatever `body` throws.
    public func forEachEvent(
        matching query: EventQuery, after: UInt64 = 0, limit: Int = 10_000, _ body: (EventView) throws -> Void
    ) throws -> UInt64 {
        try Self.checkQueryRead(query, limit: limit)
        let databases = environment.databases
        let upcasting = environment.upcasting
        return try environment.read { txn in
            let head = try Writer.lastPosition(txn, databases)
            try Self.forEachMatch(of: query, after: after, limit: limit, txn, databases) { record, position in
                if upcasting.isEmpty, !SealedData.isSealed(record.dataBytes) || SystemWrites.readsSealed {
                    try body(EventView(position: position, record: record))
                } else {
                    try EventView.withView(of: try upcasting.upcast(opened(record.recordedEvent(at: position), txn)), body)
                }
            }
            return head
        }
    }

    /// Refuses a query read's negative limit or invalid query (``EventStoreError/Code/invalidInput``).
    private static func checkQueryRead(_ query: EventQuery, limit: Int) throws {
        guard limit >= 0 else {
            throw EventStoreError(.invalidInput, "The limit is negative; give 0 or more.")
        }
        try query.validate()
    }

    /// Hands each record after `after` that matches `query` (checked) and its position to
    /// `body`, in position order, up to `limit`: the log itself for every event (each record
    /// read once), else the positions the indexes give. What both query reads walk.
    private static func forEachMatch(
        of query: EventQuery, after: UInt64, limit: Int, _ txn: Transaction, _ databases: Databases,
        _ body: (RecordView, UInt64) throws -> Void
    ) throws {
        // Nothing follows the last position (and `after + 1` would wrap to the start).
        guard after < .max else { return }
        if query.items.count == 1, query.items[0].types.isEmpty, query.items[0].tags.isEmpty {
            let cursor = try txn.cursor(databases.events)
            var entry = try BigEndian.withBytes(of: after &+ 1) { key in try cursor.seek(atLeast: key) }
            var handed = 0
            while handed < limit, let (key, value) = entry {
                let position = try EventStore.position(of: key)
                try body(try RecordView(value, position: position), position)
                handed += 1
                entry = try cursor.next()
            }
            return
        }
        for position in try QueryIndexes.matchingPositions(of: query, after: after, limit: limit, txn, databases) {
            guard let value = try BigEndian.withBytes(of: position, { try txn.get(databases.events, $0) }) else { continue }
            try body(try RecordView(value, position: position), position)
        }
    }

    /// The last event at or before `through` (default: the head) that matches `query`, or nil:
    /// a counter's latest value without reading every earlier one. Through the indexes, as
    /// ``read(_:after:limit:)``; errors as it.
    public func lastEvent(matching query: EventQuery, through: UInt64 = .max) throws -> RecordedEvent? {
        try query.validate()
        let databases = environment.databases
        return try environment.read { txn in
            guard let position = try QueryIndexes.lastMatch(of: query, through: through, txn, databases),
                let value = try BigEndian.withBytes(of: position, { try txn.get(databases.events, $0) })
            else { return nil }
            return try environment.upcasting.upcast(opened(RecordView(value, position: position).recordedEvent(at: position), txn))
        }
    }

    /// The event at `position`, or nil when there is none.
    public func event(at position: UInt64) throws -> RecordedEvent? {
        let databases = environment.databases
        return try environment.read { txn in
            guard let value = try BigEndian.withBytes(of: position, { try txn.get(databases.events, $0) }) else {
                return nil
            }
            return try environment.upcasting.upcast(opened(RecordView(value, position: position).recordedEvent(at: position), txn))
        }
    }

    /// The event recorded with `id`, or nil when no event has it or its event was deleted (the
    /// id table the store keeps for idempotency, read in one snapshot).
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/damaged`` when the id table and the
    /// log disagree, ``EventStoreError/Code/closed`` after `close()`.
    public func event(withID id: UUID) throws -> RecordedEvent? {
        let databases = environment.databases
        return try environment.read { txn in
            guard let (position, view) = try Self.record(withID: id, txn, databases), let view else { return nil }
            return try environment.upcasting.upcast(opened(view.recordedEvent(at: position), txn))
        }
    }

    /// The position of the last event in the log; 0 when the log is empty.
    public func headPosition() throws -> UInt64 {
        let databases = environment.databases
        return try environment.read { txn in try Writer.lastPosition(txn, databases) }
    }

    /// The version of `stream`'s last event; 0 when the stream has no events.
    public func streamVersion(_ stream: String) throws -> UInt64 {
        let databases = environment.databases
        return try environment.read { txn in
            try Self.streamHead(stream, txn, databases)?.version ?? 0
        }
    }

    /// Counts and sizes of the store, read in one consistent snapshot.
    public func statistics() throws -> StoreStatistics {
        let databases = environment.databases
        let pageSize = try environment.pageSize()
        let info = try environment.info()
        let fileSize = try environment.directory.dataFileSize()
        let readers = try environment.readerSlotsInUse()
        return try environment.read { txn in
            let events = try txn.entryCount(databases.events)
            let streams = try txn.entryCount(databases.streams)
            let cursor = try txn.cursor(databases.events)
            let first = try cursor.first().map { entry in try Self.position(of: entry.key) } ?? 0
            let head = try cursor.last().map { entry in try Self.position(of: entry.key) } ?? 0
            return StoreStatistics(
                eventCount: UInt64(events), streamCount: UInt64(streams), firstPosition: first,
                headPosition: head, fileSize: fileSize, mapSize: info.me_mapsize, pageSize: pageSize,
                readers: readers.count, readerProcesses: readers)
        }
    }

    // MARK: Helpers shared by the read paths

    static func streamHead(_ stream: String, _ txn: Transaction, _ databases: Databases) throws -> StreamHead? {
        var name = stream
        guard !name.isEmpty else { return nil }
        let stored = try name.withUTF8 { bytes in
            try txn.get(databases.streams, UnsafeRawBufferPointer(bytes))
        }
        guard let stored else { return nil }
        guard let head = StreamHead(stored) else {
            throw EventStoreError(.damaged, "The head of stream '\(stream)' is unreadable; run `esctl verify`.")
        }
        return head
    }

    /// The record the id table gives for `id`, in place; nil when the id is not recorded, and a
    /// nil view when its event was deleted (the id stays known forever, pointing to its hole).
    /// Throws ``EventStoreError/Code/damaged`` when the table and the log disagree.
    static func record(
        withID id: UUID, _ txn: Transaction, _ databases: Databases
    ) throws -> (position: UInt64, view: RecordView?)? {
        guard let stored = try withUnsafeBytes(of: id.uuid, { try txn.get(databases.eventIDs, $0) }) else {
            return nil
        }
        guard stored.count == 8 else {
            throw EventStoreError(.damaged, "The id index holds a value that is not a position; run `esctl verify`.")
        }
        let position = BigEndian.uint64(stored)
        guard let value = try BigEndian.withBytes(of: position, { try txn.get(databases.events, $0) }) else {
            // A hole a deletion left; without any deletion, a record the log has lost.
            if try MetaCounters.value(Schema.deletedCountKey, txn, databases) > 0, position <= (try Writer.lastPosition(txn, databases)) {
                return (position, nil)
            }
            throw EventStoreError(.damaged, "The id index points to position \(position), which is not in the log; run `esctl verify`.")
        }
        let view = try RecordView(value, position: position)
        guard view.id == id else {
            throw EventStoreError(.damaged, "The id index points to position \(position), a record with another id; run `esctl verify`.")
        }
        return (position, view)
    }

    static func position(of key: UnsafeRawBufferPointer) throws(EventStoreError) -> UInt64 {
        guard key.count == 8 else {
            throw EventStoreError(.damaged, "The log holds a key that is not a position; run `esctl verify`.")
        }
        return BigEndian.uint64(key)
    }
}

extension EventStore {
    /// The event as readers see it: its personal data decrypted with the keys `txn` sees, or
    /// marked forgotten. Events without personal data cost a comparison of their first bytes.
    func opened(_ event: RecordedEvent, _ txn: Transaction) throws -> RecordedEvent {
        guard SealedData.isSealed(event.data), !SystemWrites.readsSealed else { return event }
        let tables = LMDBTables(txn: txn, environment: environment, registry: tableRegistry)
        return event.opened(
            try PersonalEnvelope.open(event.data, id: event.id) { subject in
                try SubjectKeys.key(of: subject) { key in try tables.withValue(SubjectKeys.table, key) { Array($0) } }
            })
    }
}
