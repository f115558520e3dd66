@_spi(Records) import EventStoreCore
import CLMDB
import Foundation

/// The tables and the log of an LMDB transaction.
final class LMDBTables: TableStorage {
    /// Positions gathered per step of a stream's walk.
    private static let pageSize = 1024
    private let txn: Transaction
    private let databases: Databases
    private let registry: TableRegistry
    private let environment: Environment
    /// The lowest and highest addresses of the records this transaction's scans read since it
    /// last released pages: what ``releaseReadPages()`` lets go of, when a scan read any.
    private var scanned: (low: UInt, high: UInt)?

    init(txn: Transaction, environment: Environment, registry: TableRegistry) {
        self.txn = txn
        self.environment = environment
        self.databases = environment.databases
        self.registry = registry
    }

    /// Lets go of the pages of the records this transaction scanned since the last call (a
    /// fold's chunk of the log), leaving other readers' pages mapped; of the whole map when it
    /// scanned none (row writes, lookups).
    func releaseReadPages() {
        if let scanned {
            self.scanned = nil
            environment.releaseMappedPagesHoldingGate(from: scanned.low, through: scanned.high)
        } else {
            environment.releaseMappedPagesHoldingGate()
        }
    }

    /// The table's handle; nil for a table a read-only store does not have, which reads as empty.
    private func table(_ name: String) throws(EventStoreError) -> MDB_dbi? {
        try registry.handle(name)
    }

    private func writableTable(_ name: String) throws(EventStoreError) -> MDB_dbi {
        guard let dbi = try table(name) else {
            throw EventStoreError(.invalidInput, "The table '\(name)' was written in a read transaction; write inside writeTables.")
        }
        return dbi
    }

    var rowsAtHand: Bool { true }

    func valueAtHand(_ table: String, _ key: [UInt8]) throws -> [UInt8]?? {
        .some(try withValue(table, key) { Array($0) })
    }

    func withValue<R>(_ table: String, _ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let dbi = try self.table(table) else { return nil }
        return try key.withUnsafeBytes { keyBytes in
            guard let value = try txn.get(dbi, keyBytes) else { return nil }
            return try body(value)
        }
    }

    func put(_ table: String, _ key: [UInt8], _ value: [UInt8]) throws {
        let dbi = try writableTable(table)
        try key.withUnsafeBytes { keyBytes in
            try value.withUnsafeBytes { valueBytes in _ = try txn.put(dbi, keyBytes, valueBytes) }
        }
    }

    func delete(_ table: String, _ key: [UInt8]) throws -> Bool {
        let dbi = try writableTable(table)
        return try key.withUnsafeBytes { try txn.delete(dbi, $0) }
    }

    func removeAll(_ table: String) throws {
        try txn.empty(try writableTable(table))
    }

    func count(_ table: String) throws -> Int {
        guard let dbi = try self.table(table) else { return 0 }
        return try txn.entryCount(dbi)
    }

    func scan(
        _ table: String, prefix: [UInt8], after: [UInt8]?, reverse: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard let dbi = try self.table(table) else { return }
        let cursor = try txn.cursor(dbi)
        var entry: Cursor.Entry?
        if let after {
            let found = try after.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            if !reverse {
                entry = found
                if let (key, _) = entry, key.elementsEqual(after) { entry = try cursor.next() }
            } else {
                // The first key at or past `after` is where a reverse scan starts: one step back.
                entry = found == nil ? try cursor.last() : try cursor.previous()
            }
        } else if !reverse {
            entry = prefix.isEmpty ? try cursor.first() : try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
        } else if let successor = TableTransaction.successor(of: prefix) {
            // The last key with the prefix is just before the first key past every such key.
            let after = try successor.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            entry = after == nil ? try cursor.last() : try cursor.previous()
        } else {
            entry = try cursor.last()
        }
        while let (key, value) = entry, key.starts(with: prefix) {
            guard try body(key, value) else { return }
            entry = reverse ? try cursor.previous() : try cursor.next()
        }
    }

    func headPosition() throws -> UInt64 {
        return try Writer.lastPosition(txn, databases)
    }

    func streamVersion(_ stream: String) throws -> UInt64 {
        try EventStore.streamHead(stream, txn, databases)?.version ?? 0
    }

    func deletionCount(ofType type: String?, trimsOnly: Bool) throws -> UInt64 {
        try MetaCounters.value((trimsOnly ? Schema.trimmedTypePrefix : Schema.deletedTypePrefix) + (type ?? ""), txn, databases)
    }

    func forEachEvent(inStream stream: String, from version: UInt64, _ body: (RecordedEvent) async throws -> Void) async throws {
        guard let head = try EventStore.streamHead(stream, txn, databases), version <= head.version else { return }
        // The index walk takes a synchronous closure: positions are gathered a page at a time,
        // then their events visited, so memory stays flat in the stream's length.
        var next = version
        while next <= head.version {
            var positions: [UInt64] = []
            try EventStore.forEachPosition(of: head, stream: stream, from: next, direction: .forward, limit: Self.pageSize, txn, databases) {
                positions.append($0)
                return true
            }
            guard !positions.isEmpty else { return }
            for position in positions {
                let event = try EventStore.indexedRecord(at: position, of: stream, txn, databases).recordedEvent(at: position)
                try await body(event)
                next = event.version + 1
            }
        }
    }

    func eventPage(from start: UInt64, through last: UInt64, types: Set<String>?, limit: Int) throws
        -> (events: [RecordedEvent], examined: UInt64)
    {
        var interner = StringInterner()
        var events: [RecordedEvent] = []
        let examined = try forEachRecordAtHand(from: start, through: last, types: types) { view in
            events.append(try view.record.recordedEvent(at: view.position, interner: &interner))
            return events.count < limit
        }
        return (events, examined ?? start &- 1)
    }
}

extension LMDBTables {
    /// Widens the span of scanned addresses to `value`'s.
    @inline(__always)
    private func noteScanned(_ value: UnsafeRawBufferPointer) {
        let low = UInt(bitPattern: value.baseAddress)
        let high = low &+ UInt(max(value.count, 1)) &- 1
        if let span = scanned {
            scanned = (min(span.low, low), max(span.high, high))
        } else {
            scanned = (low, high)
        }
    }

    func forEachRecordAtHand(from start: UInt64, through last: UInt64, types: Set<String>?, _ body: (EventView) throws -> Bool) throws
        -> UInt64?
    {
        let filter = EventFilter(types: types).compiled
        if let types, let typeIndex = databases.typeIndex, let head = try sparseWalk(of: types, from: start, through: last, typeIndex) {
            return try forEachRecord(ofTypes: Array(types), typeIndex, from: start, through: min(last, head), filter: filter, body)
        }
        let cursor = try txn.cursor(databases.events)
        var examined = start &- 1
        var entry = try BigEndian.withBytes(of: max(start, 1)) { try cursor.seek(atLeast: $0) }
        while let (key, value) = entry {
            let position = try EventStore.position(of: key)
            if position > last { break }
            examined = position
            noteScanned(value)
            let record = try RecordView(value, position: position)
            if filter.matches(record) {
                guard try body(EventView(position: position, record: record)) else { return position }
            }
            entry = try cursor.next()
        }
        return examined
    }

    /// The share of the log at or under which a visit of some types walks their positions in the
    /// type index instead of reading every record: a quarter. Reading a record found by position
    /// costs a few times reading the next one in a scan, and a fold's lane that wants one type in
    /// ten (a projection of one app among several) would otherwise read and check all ten.
    static let sparseShare = 4

    /// The spans shorter than this are scanned whatever their types: a catch-up of a few new
    /// events reads them sooner than it seeks each type's positions.
    static let sparseSpan: UInt64 = 64

    /// The head of the log when `types` have few enough events (``sparseShare``) for a walk of
    /// their positions from `start` through `last` to beat a scan; nil to scan. Counts come from
    /// the index's and the log's own statistics (`mdb_cursor_count`, `mdb_stat`): no walk.
    private func sparseWalk(of types: Set<String>, from start: UInt64, through last: UInt64, _ typeIndex: MDB_dbi) throws -> UInt64? {
        let events = try txn.cursor(databases.events)
        guard let (key, _) = try events.last() else { return nil }
        let head = try EventStore.position(of: key)
        let start = max(start, 1)
        let end = min(last, head)
        guard end >= start else { return nil }
        let index = try txn.cursor(typeIndex)
        var wanted = 0
        for type in types { wanted += try QueryIndexes.eventCount(under: type, index) }
        return Self.walksTypeIndex(wanted: wanted, logged: try txn.entryCount(databases.events), span: end - start) ? head : nil
    }

    /// Whether a visit of types that have `wanted` events in a log of `logged`, over `span`
    /// positions after its first, walks the type index (``sparseShare``, ``sparseSpan``).
    static func walksTypeIndex(wanted: Int, logged: Int, span: UInt64) -> Bool {
        span >= sparseSpan && wanted <= logged / sparseShare
    }

    /// How many positions a step of ``forEachRecord(ofTypes:_:from:through:filter:_:)`` reads from
    /// each type's index before visiting the events: memory stays flat in the span's length.
    private static let sparsePage = 256

    /// ``forEachRecordAtHand(from:through:types:_:)`` by the type index: each type's positions a
    /// page at a time, merged in order, each record read by its position. `last` is at most the
    /// head. Returns the position where `body` stopped, else `last` (`start - 1` below it).
    /// Throws ``EventStoreError/Code/damaged`` when the index names a position the log does not
    /// hold, or holds an event of another type there.
    private func forEachRecord(
        ofTypes types: [String], _ typeIndex: MDB_dbi, from start: UInt64, through last: UInt64, filter: CompiledFilter,
        _ body: (EventView) throws -> Bool
    ) throws -> UInt64? {
        var next = max(start, 1)
        while next <= last {
            // Each type's next positions; the lowest last position of a full page bounds this
            // step, since a type may hold positions before it that the next page would bring.
            var found: [UInt64] = []
            var bound = last
            for type in types {
                let page = try QueryIndexes.positions(
                    under: type, in: typeIndex, after: next - 1, before: bound &+ 1 == 0 ? .max : bound + 1, limit: Self.sparsePage, txn)
                found += page
                if page.count == Self.sparsePage, let end = page.last { bound = min(bound, end) }
            }
            found.sort()
            for position in found where position <= bound {
                guard let value = try BigEndian.withBytes(of: position, { try txn.get(databases.events, $0) }) else {
                    throw EventStoreError(.damaged, "The type index points to position \(position), which is not in the log; run `esctl verify`.")
                }
                noteScanned(value)
                let record = try RecordView(value, position: position)
                guard filter.matches(record) else {
                    throw EventStoreError(
                        .damaged, "The type index holds position \(position) under a type its event does not have; run `esctl verify`.")
                }
                guard try body(EventView(position: position, record: record)) else { return position }
            }
            guard bound < last else { break }
            next = bound + 1
        }
        return max(start, 1) > last ? start &- 1 : last
    }
}

extension TableTransaction {
    /// A table transaction over an LMDB transaction of `environment`.
    convenience init(txn: Transaction, environment: Environment, registry: TableRegistry, isWritable: Bool) {
        self.init(
            storage: LMDBTables(txn: txn, environment: environment, registry: registry), isWritable: isWritable,
            upcasting: environment.upcasting)
    }
}
