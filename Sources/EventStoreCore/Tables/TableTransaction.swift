import Foundation

/// Named tables of keys and values kept beside the log, and the log itself, seen through one
/// transaction of the store's backend: a read snapshot (`EventStore.readTables(_:)`) or a write
/// transaction (`EventStore.writeTables(_:)`), where every change commits atomically with the
/// others or not at all.
///
/// Keys and values are bytes; keys sort byte by byte. Valid only inside the closure it was given
/// to: after the closure returns every call throws ``EventStoreError/Code/closed``. Its
/// operations are async: on PostgreSQL each is a round trip that holds no thread while it waits.
public final class TableTransaction {
    private let storage: any TableStorage
    private let upcasting: Upcasting
    /// Whether this is a write transaction.
    public let isWritable: Bool
    private var isValid = true

    /// A transaction over a backend's tables (LMDB's, or another backend's), whose reads of
    /// events go through `upcasting` (the store's upcasters).
    package init(storage: any TableStorage, isWritable: Bool, upcasting: Upcasting) {
        self.storage = storage
        self.isWritable = isWritable
        self.upcasting = upcasting
    }

    /// Tells the kernel that the store's pages this process has read so far need not stay in
    /// its page tables (they stay in the page cache). A long scan calls it now and then, so its
    /// resident size does not grow with what it has read. Does nothing on a backend without a
    /// memory map.
    public func releaseReadPages() {
        guard isValid else { return }
        storage.releaseReadPages()
    }

    package func invalidate() { isValid = false }

    /// Ends this transaction's use: every later call throws ``EventStoreError/Code/closed``.
    package func end() { isValid = false }

    private func checkValid() throws(EventStoreError) {
        guard isValid else {
            throw EventStoreError(.closed, "A table transaction was used after its closure returned; use it only inside the closure.")
        }
    }

    private func checkWritable(_ table: String) throws(EventStoreError) {
        try checkValid()
        guard isWritable else {
            throw EventStoreError(.invalidInput, "The table '\(table)' was written in a read transaction; write inside writeTables.")
        }
    }

    // MARK: Tables

    /// The value under `key`, copied out; nil when there is none.
    public func get(_ table: String, _ key: [UInt8]) async throws -> [UInt8]? {
        try await withValue(table, key) { Array($0) }
    }

    /// Runs `body` with the bytes stored under `key` without copying them; nil when there is none.
    /// The bytes are valid only during `body`.
    public func withValue<R>(_ table: String, _ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) async throws -> R? {
        try checkValid()
        return try await storage.withValue(table, key, body)
    }

    /// The value under `key` when the backend can read it without waiting (`.some(nil)`: there
    /// is none); nil when it must be read with ``get(_:_:)``. For a synchronous fold, which
    /// reads rows as it goes (LMDB reads every row at hand; PostgreSQL none).
    package func valueAtHand(_ table: String, _ key: [UInt8]) throws -> [UInt8]?? {
        try checkValid()
        return try storage.valueAtHand(table, key)
    }

    /// Whether ``valueAtHand(_:_:)`` always has the value (LMDB): a fold then never waits.
    package var rowsAtHand: Bool { storage.rowsAtHand }

    /// Stores `value` under `key`, replacing what was there.
    public func put(_ table: String, _ key: [UInt8], _ value: [UInt8]) async throws {
        try checkWritable(table)
        try Self.checkKey(key, table)
        try await storage.put(table, key, value)
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    public func delete(_ table: String, _ key: [UInt8]) async throws -> Bool {
        try checkWritable(table)
        try Self.checkKey(key, table)
        return try await storage.delete(table, key)
    }

    /// Removes every entry of a table.
    public func removeAll(_ table: String) async throws {
        try checkWritable(table)
        try await storage.removeAll(table)
    }

    /// The number of entries in a table.
    public func count(_ table: String) async throws -> Int {
        try checkValid()
        return try await storage.count(table)
    }

    /// Visits the entries whose keys start with `prefix`, in key order (or reverse), until `body`
    /// returns false; with `after`, only those past that key in the scan's direction (greater,
    /// or smaller in reverse), which is how a page continues where the last one ended. The bytes
    /// are valid only during each call of `body`.
    public func scan(
        _ table: String, prefix: [UInt8] = [], after: [UInt8]? = nil, reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) async throws {
        try checkValid()
        try await storage.scan(table, prefix: prefix, after: after, reverse: reverse, body)
    }

    /// The smallest key greater than every key starting with `prefix`; nil when there is none
    /// (an empty prefix, or one of 0xFF bytes only).
    package static func successor(of prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }

    private static func checkKey(_ key: [UInt8], _ table: String) throws(EventStoreError) {
        guard !key.isEmpty, key.count <= 511 else {
            throw EventStoreError(.invalidInput, "A key of the table '\(table)' is \(key.count) bytes; keys hold 1 to 511 bytes.")
        }
    }

    // MARK: The log

    /// The fingerprint of the store's upcasters of the event types `types` (all when nil): 0
    /// when none of them has an upcaster. A projection's state records it, and is rebuilt when
    /// it changes.
    package func upcasterFingerprint(consuming types: Set<String>?) -> UInt64 {
        upcasting.fingerprint(consuming: types)
    }

    /// A number that grows with every deletion that removed events of the types `types`
    /// consume (all when nil; recorded names of renamed types count too): 0 when none did. For
    /// a consumer of `$StreamDeleted` events, which handles whole-stream deletes itself, it
    /// grows with trims by retention only. A projection's state records it, and is rebuilt when
    /// it changes.
    package func deletionFingerprint(consuming types: Set<String>?) async throws -> UInt64 {
        try checkValid()
        guard let types else {
            return try await storage.deletionCount(ofType: nil, trimsOnly: false) &+ SubjectKeys.forgetCount(in: self)
        }
        let handlesDeletes = types.contains(StreamDeletion.eventType)
        var total: UInt64 = 0
        var personal = false
        for type in upcasting.recordedTypes(types) ?? types where type != StreamDeletion.eventType {
            total &+= try await storage.deletionCount(ofType: type, trimsOnly: handlesDeletes)
            if !personal { personal = try await SubjectKeys.hasPersonalData(type: type, in: self) }
        }
        // A forget changes what events of types with personal data read as.
        if personal { total &+= try await SubjectKeys.forgetCount(in: self) }
        return total
    }

    /// The event as readers see it: personal data decrypted with the keys this transaction sees,
    /// or marked forgotten.
    package func opened(_ event: RecordedEvent) async throws -> RecordedEvent {
        guard PersonalEnvelope.isSealed(event.data), !SystemWrites.readsSealed else { return event }
        if storage.rowsAtHand { return try openedAtHand(event) }
        // Otherwise the subjects are found first and their keys awaited, then the envelope opened.
        var keys: [String: SubjectKey] = [:]
        for subject in PersonalEnvelope.subjects(of: event.data) where keys[subject] == nil {
            keys[subject] = try await SubjectKeys.key(of: subject, in: self)
        }
        return event.opened(PersonalEnvelope.open(event.data, id: event.id) { keys[$0] })
    }

    /// ``opened(_:)`` on a storage whose rows are at hand (LMDB): the envelope is parsed once,
    /// each key read as it is needed, with no suspension.
    private func openedAtHand(_ event: RecordedEvent) throws -> RecordedEvent {
        guard PersonalEnvelope.isSealed(event.data), !SystemWrites.readsSealed else { return event }
        return event.opened(
            try PersonalEnvelope.open(event.data, id: event.id) { subject in
                try SubjectKeys.key(of: subject) { key in try storage.valueAtHand(SubjectKeys.table, key) ?? nil }
            })
    }

    /// The version of `stream`'s last event this transaction sees, deleted or not; 0 when it never had one.
    public func streamVersion(_ stream: String) async throws -> UInt64 {
        try checkValid()
        return try await storage.streamVersion(stream)
    }

    /// The position of the last event this transaction sees; 0 when the log is empty.
    public func headPosition() async throws -> UInt64 {
        guard isValid else { throw EventStoreError.closedStore }
        return try await storage.headPosition()
    }

    /// The time by which the processes that share this store decide what expires (consumer
    /// groups' leases and memberships): on a backend that processes on many hosts share
    /// (PostgreSQL), the database server's clock (`clock_timestamp()`), moved by as much as the
    /// store's clock (``StoreConfiguration/clock``) is moved from the system's, so that a test
    /// clock still drives it; nil on an embedded store, whose processes share one machine's
    /// clock: use the store's. Errors as any read of this transaction.
    public func sharedClock() async throws -> Date? {
        try checkValid()
        return try await storage.sharedClock()
    }

    /// Visits the events of `stream` from version `from` (default 1) on, in version order (none
    /// when the stream has none there), upcast by the store's upcasters.
    public func forEachEvent(inStream stream: String, from version: UInt64 = 1, _ body: (RecordedEvent) async throws -> Void) async throws {
        guard isValid else { throw EventStoreError.closedStore }
        try await storage.forEachEvent(inStream: stream, from: Swift.max(version, 1)) { event in
            let opened = try await opened(event)
            try await body(upcasting.isEmpty ? opened : try upcasting.upcast(opened))
        }
    }

    /// Visits the events from `start` through `last` in position order until `body` returns
    /// false, decoding only those whose type is in `types` (every event when nil; types as the
    /// store's upcasters give them). Returns the last position examined (`start - 1` when there
    /// was none), so a caller can go on after it.
    @discardableResult
    public func forEachEvent(
        from start: UInt64, through last: UInt64 = .max, types: Set<String>? = nil,
        _ body: (RecordedEvent) async throws -> Bool
    ) async throws -> UInt64 {
        try await forEachPage(from: start, through: last, types: types) { events in
            for event in events { guard try await body(event) else { return event.position } }
            return nil
        }
    }

    /// The same, with a synchronous `body`, called with no suspension between the events of a
    /// page (for a fold, which is synchronous: on LMDB this is its hot loop).
    @discardableResult
    package func forEachEvent(
        from start: UInt64, through last: UInt64 = .max, types: Set<String>? = nil, synchronously body: (RecordedEvent) throws -> Bool
    ) async throws -> UInt64 {
        try await forEachPage(from: start, through: last, types: types) { events in
            for event in events { guard try body(event) else { return event.position } }
            return nil
        }
    }

    /// ``forEachEvent(from:through:types:_:)`` with each event as a view, valid during the call:
    /// in place where the backend can (LMDB) and it reads as stored; else (personal data, a type an
    /// upcaster may change, another backend) a copy, opened and upcast. A typed fold's fast path.
    @discardableResult
    package func forEachView(
        from start: UInt64, through last: UInt64 = .max, types: Set<String>? = nil, _ body: (EventView) throws -> Bool
    ) async throws -> UInt64 {
        guard isValid else { throw EventStoreError.closedStore }
        let recordedTypes = upcasting.isEmpty ? types : upcasting.recordedTypes(types)
        let examined = try storage.forEachRecordAtHand(from: Swift.max(start, 1), through: last, types: recordedTypes) { view in
            let sealed = SealedData.isSealed(view.data)
            guard sealed || upcasting.mayStep(typeBytes: view.typeUTF8) else { return try body(view) }
            let event = sealed ? try openedAtHand(view.copy()) : view.copy()
            guard let upcast = try upcasting.upcast(event, wanting: types) else { return true }
            return try EventView.withView(of: upcast, body)
        }
        if let examined { return examined }
        return try await forEachPage(from: start, through: last, types: types) { events in
            for event in events { guard try EventView.withView(of: event, body) else { return event.position } }
            return nil
        }
    }

    /// Reads the events from `start` through `last` a page at a time, opened and upcast, and
    /// hands each page to `visit`, which returns the position where it stopped (nil: go on).
    /// Returns that position, or the last examined.
    private func forEachPage(
        from start: UInt64, through last: UInt64, types: Set<String>?, _ visit: ([RecordedEvent]) async throws -> UInt64?
    ) async throws -> UInt64 {
        guard isValid else { throw EventStoreError.closedStore }
        let recordedTypes = upcasting.isEmpty ? types : upcasting.recordedTypes(types)
        var next = Swift.max(start, 1)
        var examined = start &- 1
        while next <= last {
            let page = try await storage.eventPage(from: next, through: last, types: recordedTypes, limit: Self.eventsPerPage)
            var events: [RecordedEvent] = []
            events.reserveCapacity(page.events.count)
            // An event that cannot be opened or upcast fails the read after the events before it
            // are visited, as a read in place visits them (a fold may go on after it).
            var failure: (any Error)?
            for stored in page.events {
                do {
                    let event = PersonalEnvelope.isSealed(stored.data) ? try await opened(stored) : stored
                    if upcasting.isEmpty {
                        events.append(event)
                    } else if let upcast = try upcasting.upcast(event, wanting: types) {
                        events.append(upcast)
                    }
                } catch {
                    failure = error
                    break
                }
            }
            if let stopped = try await visit(events) { return stopped }
            if let failure { throw failure }
            guard page.examined >= next else { break }
            examined = page.examined
            guard page.events.count == Self.eventsPerPage, page.examined < last else { break }
            next = page.examined + 1
        }
        return examined
    }

    /// The events read from the backend at a time by ``forEachEvent(from:through:types:_:)``.
    static let eventsPerPage = 512
}
