@_spi(Records) import EventStoreCore
import CLMDB
import Foundation

/// The tag and type indexes of an LMDB store (`tag_index`, `type_index`: DUPSORT, DUPFIXED; key
/// the tag or type, values the u64 big-endian positions of its events) and the queries that go
/// through them. Every append writes them in its transaction and every deletion removes its
/// events from them. A query item costs a seek of its rarest key (its rarest tag, or its types
/// when they have fewer events) and a walk of that key's events after the position asked,
/// checking each for the item's other tags and types: never a scan of the log.
enum QueryIndexes {
    static let flags = UInt32(MDB_DUPSORT | MDB_DUPFIXED)

    /// Opens an index, or nil when the store has none yet.
    static func open(_ name: String, in txn: Transaction) throws(EventStoreError) -> MDB_dbi? {
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn.handle, name, flags, &dbi)
        if rc == MDB_NOTFOUND { return nil }
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "opening the table '\(name)'") }
        return dbi
    }

    /// Creates both indexes, fills them from the log (a store written before them: its events
    /// are indexed once, here) and marks the store ``Schema/indexedFormat``.
    static func create(in txn: Transaction, databases: Databases) throws -> Databases {
        var databases = databases
        // Another process may have built them since this one looked, outside this transaction.
        if let tags = try open(Schema.tagIndex, in: txn), let types = try open(Schema.typeIndex, in: txn) {
            databases.tagIndex = tags
            databases.typeIndex = types
            return databases
        }
        for name in [Schema.tagIndex, Schema.typeIndex] {
            var dbi: MDB_dbi = 0
            let rc = mdb_dbi_open(txn.handle, name, flags | UInt32(MDB_CREATE), &dbi)
            guard rc == MDB_SUCCESS else { throw EventStoreError.lmdb(rc, "creating the table '\(name)'") }
            if name == Schema.tagIndex { databases.tagIndex = dbi } else { databases.typeIndex = dbi }
        }
        let cursor = try txn.cursor(databases.events)
        var entry = try cursor.first()
        while let (key, value) = entry {
            let position = try EventStore.position(of: key)
            try add(RecordView(value, position: position), at: position, txn, databases)
            entry = try cursor.next()
        }
        try MetaCounters.markFormat(Schema.indexedFormat, txn, databases)
        return databases
    }

    /// Indexes the record written at `position` (positions only grow, so each value is its key's last).
    static func add(_ record: RecordView, at position: UInt64, _ txn: Transaction, _ databases: Databases) throws {
        guard let typeIndex = databases.typeIndex, let tagIndex = databases.tagIndex else { return }
        try BigEndian.withBytes(of: position) { positionBytes in
            try txn.put(typeIndex, record.typeBytes, positionBytes, flags: MDB_APPENDDUP)
            try record.forEachTag { tag in try txn.put(tagIndex, tag, positionBytes, flags: MDB_APPENDDUP) }
        }
    }

    /// Indexes an event being written at `position`, from its type's bytes and its tags.
    static func add(
        type: UnsafeRawBufferPointer, tags: [String], at position: UInt64, _ txn: Transaction, _ databases: Databases
    ) throws {
        guard let typeIndex = databases.typeIndex, let tagIndex = databases.tagIndex else { return }
        try BigEndian.withBytes(of: position) { positionBytes in
            try txn.put(typeIndex, type, positionBytes, flags: MDB_APPENDDUP)
            for tag in tags {
                var tag = tag
                _ = try tag.withUTF8 { try txn.put(tagIndex, UnsafeRawBufferPointer($0), positionBytes, flags: MDB_APPENDDUP) }
            }
        }
    }

    /// Removes a deleted record from the indexes.
    static func remove(_ record: RecordView, at position: UInt64, _ txn: Transaction, _ databases: Databases) throws {
        guard let typeIndex = databases.typeIndex, let tagIndex = databases.tagIndex else { return }
        try BigEndian.withBytes(of: position) { positionBytes in
            try txn.delete(typeIndex, record.typeBytes, value: positionBytes)
            try record.forEachTag { tag in try txn.delete(tagIndex, tag, value: positionBytes) }
        }
    }

    // MARK: Queries

    /// The first event after `after` that matches `query`, and the index of the first item it
    /// matches; nil when none does. Reads the indexes (a seek per tag or type of each item), or,
    /// in a store without them (read-only, written before them), the log after `after`.
    static func firstMatch(
        of query: EventQuery, after: UInt64, _ txn: Transaction, _ databases: Databases
    ) throws -> (position: UInt64, item: Int)? {
        var best: (position: UInt64, item: Int)?
        for (index, item) in query.items.enumerated() {
            let bound = best?.position ?? .max
            guard let found = try matches(of: item, after: after, before: bound, limit: 1, txn, databases).first else { continue }
            if found < bound { best = (found, index) }
        }
        return best
    }

    /// The positions of the first `limit` events after `after` that match `query`, in order.
    static func matchingPositions(
        of query: EventQuery, after: UInt64, limit: Int, _ txn: Transaction, _ databases: Databases
    ) throws -> [UInt64] {
        // One item's matches are in order and distinct already (the common query, and `.all`).
        if query.items.count == 1 { return try matches(of: query.items[0], after: after, before: .max, limit: limit, txn, databases) }
        var positions = Set<UInt64>()
        for item in query.items {
            for position in try matches(of: item, after: after, before: .max, limit: limit, txn, databases) {
                positions.insert(position)
            }
        }
        return Array(positions.sorted().prefix(limit))
    }

    /// The position of the last event at or before `through` that matches `query`; nil when none does.
    static func lastMatch(of query: EventQuery, through: UInt64, _ txn: Transaction, _ databases: Databases) throws -> UInt64? {
        var best: UInt64?
        for item in query.items {
            if let found = try lastMatch(of: item, through: through, above: best ?? 0, txn, databases) { best = found }
        }
        return best
    }

    /// The last position in `(above, through]` of an event matching `item`.
    private static func lastMatch(
        of item: QueryItem, through: UInt64, above: UInt64, _ txn: Transaction, _ databases: Databases
    ) throws -> UInt64? {
        guard through > above else { return nil }
        let types = Set(item.types.map { Array($0.utf8) })
        guard let tagIndex = databases.tagIndex, let typeIndex = databases.typeIndex, !(item.tags.isEmpty && item.types.isEmpty) else {
            // Every event (or a store without indexes): the log backwards from `through`.
            let cursor = try txn.cursor(databases.events)
            var entry = try BigEndian.withBytes(of: through) { try cursor.get(MDB_SET_RANGE, key: $0) }
            if let (key, _) = entry, try EventStore.position(of: key) > through { entry = try cursor.previous() }
            if entry == nil { entry = try cursor.last() }
            while let (key, value) = entry {
                let position = try EventStore.position(of: key)
                if position <= above { return nil }
                if position <= through, matches(try RecordView(value, position: position), types: types, tags: item.tags) { return position }
                entry = try cursor.previous()
            }
            return nil
        }
        if item.tags.isEmpty {
            var best: UInt64?
            for type in item.distinctTypes {
                let cursor = try txn.cursor(typeIndex)
                if let found = try lastValue(under: type, through: through, cursor), found > max(above, best ?? 0) { best = found }
            }
            return best
        }
        // From the rarest tag, backwards, checking each event's type and other tags.
        let cursor = try txn.cursor(tagIndex)
        guard let rarest = try rarestTag(of: item, cursor) else { return nil }
        // Byte by byte: `!=` would drop a tag equal to the rarest but for its Unicode form.
        let others = item.tags.filter { !$0.utf8.elementsEqual(rarest.tag.utf8) }
        guard var position = try lastValue(under: rarest.tag, through: through, cursor) else { return nil }
        while position > above {
            if let stored = try BigEndian.withBytes(of: position, { try txn.get(databases.events, $0) }),
                matches(try RecordView(stored, position: position), types: types, tags: others)
            {
                return position
            }
            guard let (_, value) = try cursor.get(MDB_PREV_DUP), value.count == 8 else { return nil }
            position = BigEndian.uint64(value)
        }
        return nil
    }

    /// Leaves `cursor` on the last value at or before `through` under `key` and returns it.
    private static func lastValue(under key: String, through: UInt64, _ cursor: borrowing Cursor) throws -> UInt64? {
        var name = key
        return try name.withUTF8 { keyBytes -> UInt64? in
            let after = try BigEndian.withBytes(of: through &+ 1) { try cursor.seek(key: UnsafeRawBufferPointer(keyBytes), atLeast: $0) }
            let entry: Cursor.Entry?
            if after != nil, through < .max {
                entry = try cursor.get(MDB_PREV_DUP)
            } else {
                guard try cursor.get(MDB_SET, key: UnsafeRawBufferPointer(keyBytes)) != nil else { return nil }
                entry = try cursor.get(MDB_LAST_DUP)
            }
            guard let (_, value) = entry, value.count == 8 else { return nil }
            return BigEndian.uint64(value)
        }
    }

    /// Up to `limit` positions in `(after, before)` of events matching `item`, in order.
    private static func matches(
        of item: QueryItem, after: UInt64, before: UInt64, limit: Int, _ txn: Transaction, _ databases: Databases
    ) throws -> [UInt64] {
        guard limit > 0, after < before else { return [] }
        guard let tagIndex = databases.tagIndex, let typeIndex = databases.typeIndex else {
            return try scan(item, after: after, before: before, limit: limit, txn, databases)
        }
        if !item.tags.isEmpty {
            return try matchesByTag(item, after: after, before: before, limit: limit, tagIndex: tagIndex, txn, databases)
        }
        if !item.types.isEmpty {
            // Each type's positions are in order: merge the first `limit` of each.
            var found: [UInt64] = []
            for type in item.distinctTypes {
                found += try positions(under: type, in: typeIndex, after: after, before: before, limit: limit, txn)
            }
            return Array(found.sorted().prefix(limit))
        }
        // Neither types nor tags: every event.
        var found: [UInt64] = []
        let cursor = try txn.cursor(databases.events)
        var entry = try BigEndian.withBytes(of: after &+ 1) { key in try cursor.seek(atLeast: key) }
        while let (key, _) = entry, found.count < limit {
            let position = try EventStore.position(of: key)
            if position >= before { break }
            found.append(position)
            entry = try cursor.next()
        }
        return found
    }

    /// Walks the positions of the item's rarest tag, or of its types when they have fewer events,
    /// checking each event for the rest of the item.
    private static func matchesByTag(
        _ item: QueryItem, after: UInt64, before: UInt64, limit: Int, tagIndex: MDB_dbi, _ txn: Transaction,
        _ databases: Databases
    ) throws -> [UInt64] {
        guard let rarest = try rarestTag(of: item, try txn.cursor(tagIndex)) else { return [] }
        var walk = (keys: [rarest.tag], index: tagIndex)
        if !item.types.isEmpty, let typeIndex = databases.typeIndex {
            let typeCursor = try txn.cursor(typeIndex)
            let types = item.distinctTypes
            if try types.reduce(0, { $0 + (try eventCount(under: $1, typeCursor)) }) < rarest.count { walk = (types, typeIndex) }
        }
        let types = Set(item.types.map { Array($0.utf8) })
        var found: [UInt64] = []
        for key in walk.keys {
            var next = after
            var kept = 0
            // The key's positions a page at a time, keeping those whose events match the whole item.
            while kept < limit {
                let page = try positions(under: key, in: walk.index, after: next, before: before, limit: 64, txn)
                for position in page where kept < limit {
                    guard let stored = try BigEndian.withBytes(of: position, { try txn.get(databases.events, $0) }) else {
                        throw EventStoreError(.damaged, "An index points to position \(position), which is not in the log; run `esctl verify`.")
                    }
                    if matches(try RecordView(stored, position: position), types: types, tags: item.tags) {
                        found.append(position)
                        kept += 1
                    }
                }
                guard page.count == 64, let last = page.last else { break }
                next = last
            }
        }
        return Array(found.sorted().prefix(limit))
    }

    /// The item's tag with the fewest events, and their count; nil when one of its tags has none
    /// (then no event matches the item). `mdb_cursor_count` on each: no walk.
    private static func rarestTag(of item: QueryItem, _ cursor: borrowing Cursor) throws -> (tag: String, count: Int)? {
        var rarest: (tag: String, count: Int)?
        for tag in item.tags {
            let count = try eventCount(under: tag, cursor)
            guard count > 0 else { return nil }
            if count < rarest?.count ?? .max { rarest = (tag, count) }
        }
        return rarest
    }

    /// How many positions an index holds under `key` (0 when none).
    static func eventCount(under key: String, _ cursor: borrowing Cursor) throws -> Int {
        var name = key
        return try name.withUTF8 { bytes in
            guard try cursor.get(MDB_SET, key: UnsafeRawBufferPointer(bytes)) != nil else { return 0 }
            return try cursor.duplicateCount()
        }
    }

    /// Whether the record's type is among `types` (none: any) and it carries every tag, compared
    /// byte by byte as the indexes compare them.
    private static func matches(_ record: RecordView, types: Set<[UInt8]>, tags: [String]) -> Bool {
        if !types.isEmpty, !types.contains(Array(record.typeBytes)) { return false }
        return tags.allSatisfy { tag in
            var tag = tag
            return tag.withUTF8 { record.hasTag(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Up to `limit` positions in `(after, before)` under `key` of a DUPSORT index.
    static func positions(
        under key: String, in index: MDB_dbi, after: UInt64, before: UInt64, limit: Int, _ txn: Transaction
    ) throws -> [UInt64] {
        let cursor = try txn.cursor(index)
        var found: [UInt64] = []
        var name = key
        try name.withUTF8 { keyBytes in
            var entry = try BigEndian.withBytes(of: after &+ 1) { start in
                try cursor.seek(key: UnsafeRawBufferPointer(keyBytes), atLeast: start)
            }
            while let (_, value) = entry, found.count < limit {
                guard value.count == 8 else {
                    throw EventStoreError(.damaged, "An index holds a value that is not a position; run `esctl verify`.")
                }
                let position = BigEndian.uint64(value)
                if position >= before { break }
                found.append(position)
                entry = try cursor.nextDuplicate()
            }
        }
        return found
    }

    /// A store without the indexes (opened read-only before a program that keeps them wrote it):
    /// the log after `after`, record by record.
    private static func scan(
        _ item: QueryItem, after: UInt64, before: UInt64, limit: Int, _ txn: Transaction, _ databases: Databases
    ) throws -> [UInt64] {
        let types = Set(item.types.map { Array($0.utf8) })
        var found: [UInt64] = []
        let cursor = try txn.cursor(databases.events)
        var entry = try BigEndian.withBytes(of: after &+ 1) { key in try cursor.seek(atLeast: key) }
        while let (key, value) = entry, found.count < limit {
            let position = try EventStore.position(of: key)
            if position >= before { break }
            if matches(try RecordView(value, position: position), types: types, tags: item.tags) { found.append(position) }
            entry = try cursor.next()
        }
        return found
    }
}
