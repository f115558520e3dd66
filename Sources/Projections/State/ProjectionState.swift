import EventStore

/// A projection's tables as `apply` sees them: rows are read from the stored state (or start
/// empty, for a state folded in memory) and changes are kept here, decoded, until the runner
/// writes them together with the checkpoint. A row written many times in one batch is encoded
/// once.
public struct ProjectionState: StateReader {
    /// One row as this state knows it.
    private struct Entry {
        /// The value, or nil for a deleted row.
        var value: (any RowValue)?
        /// Whether it differs from the stored row.
        var isDirty: Bool
    }

    /// One table's known rows.
    private struct Table {
        let name: String
        var rows: [RowKey: Entry] = [:]
    }

    /// A change made while applying the current event: the row before it, to undo a failed apply.
    private struct Undo {
        let table: Int
        let key: RowKey
        let previous: Entry?
    }

    /// The projection whose state this is (for messages).
    public let projection: String
    private var tables: [Table]
    /// Reads a stored row (table name, key) when this state does not know it; nil in memory.
    private let stored: ((String, [UInt8]) throws -> [UInt8]?)?
    private var undoLog: [Undo] = []
    private var isRecordingUndo = false

    /// An empty state of the projection's tables, held in memory (for history and tests).
    public init(for projection: some Projection) {
        self.init(projection: projection.name, tables: projection.tables, stored: nil)
    }

    init(projection: String, tables names: [String], stored: ((String, [UInt8]) throws -> [UInt8]?)?) {
        self.projection = projection
        self.tables = names.map { Table(name: $0) }
        self.stored = stored
    }

    private func tableIndex(_ name: String) throws(ProjectionError) -> Int {
        guard let index = tables.firstIndex(where: { $0.name == name }) else {
            throw ProjectionError(
                .invalidDefinition, "The projection '\(projection)' used the table '\(name)', which it does not declare in `tables`.",
                projection: projection)
        }
        return index
    }

    // MARK: Changing the state (from apply)

    /// The row under `key`, decoded as `V`; nil when there is none.
    public mutating func get<V: RowValue>(_ table: String, _ key: RowKey, as type: V.Type = V.self) throws -> V? {
        let index = try tableIndex(table)
        if let entry = tables[index].rows[key] {
            guard let value = entry.value else { return nil }
            if let typed = value as? V { return typed }
            return try decode(value.encoded, table, as: V.self)
        }
        guard let stored, let bytes = try stored(table, key.bytes) else { return nil }
        let value = try decode(bytes, table, as: V.self)
        tables[index].rows[key] = Entry(value: value, isDirty: false)
        return value
    }

    /// Stores `value` under `key`.
    public mutating func put<V: RowValue>(_ table: String, _ key: RowKey, _ value: V) throws {
        let index = try tableIndex(table)
        try checkKey(key, table)
        recordUndo(index, key)
        tables[index].rows[key] = Entry(value: value, isDirty: true)
    }

    /// Removes the row under `key`, if there is one.
    public mutating func delete(_ table: String, _ key: RowKey) throws {
        let index = try tableIndex(table)
        try checkKey(key, table)
        recordUndo(index, key)
        tables[index].rows[key] = Entry(value: nil, isDirty: true)
    }

    private func checkKey(_ key: RowKey, _ table: String) throws(ProjectionError) {
        guard !key.bytes.isEmpty, key.bytes.count <= 511 else {
            throw ProjectionError(
                .invalidDefinition, "The projection '\(projection)' used a key of \(key.bytes.count) bytes in '\(table)'; keys hold 1 to 511 bytes.",
                projection: projection)
        }
    }

    private func decode<V: RowValue>(_ bytes: [UInt8], _ table: String, as type: V.Type) throws(ProjectionError) -> V {
        do {
            return try V(decoding: bytes)
        } catch {
            throw ProjectionError.damaged(projection, "\(table): \(error)")
        }
    }

    // MARK: Applying events, with undo

    /// Applies `event` with `projection`; when `apply` throws, every change it made is undone
    /// before the error is rethrown, so the state is as it was before the event.
    public mutating func apply(_ event: RecordedEvent, with projection: some Projection) throws {
        undoLog.removeAll(keepingCapacity: true)
        isRecordingUndo = true
        defer { isRecordingUndo = false }
        do {
            try projection.apply(event, to: &self)
        } catch {
            for undo in undoLog.reversed() {
                tables[undo.table].rows[undo.key] = undo.previous
            }
            undoLog.removeAll(keepingCapacity: true)
            throw error
        }
    }

    /// Applies events in order (the projection's event types only), as the runner would.
    public mutating func fold(_ events: some Sequence<RecordedEvent>, with projection: some Projection) throws {
        for event in events where projection.eventTypes?.contains(event.type) ?? true {
            try apply(event, with: projection)
        }
    }

    private mutating func recordUndo(_ table: Int, _ key: RowKey) {
        guard isRecordingUndo else { return }
        undoLog.append(Undo(table: table, key: key, previous: tables[table].rows[key]))
    }

    // MARK: Reading (StateReader)

    public func value<V: RowValue>(_ table: String, _ key: RowKey, as type: V.Type) throws -> V? {
        let index = try tableIndex(table)
        if let entry = tables[index].rows[key] {
            guard let value = entry.value else { return nil }
            return try (value as? V) ?? decode(value.encoded, table, as: V.self)
        }
        guard let stored, let bytes = try stored(table, key.bytes) else { return nil }
        return try decode(bytes, table, as: V.self)
    }

    /// Rows of a state held in memory, in key order. A state backed by the store lists only the
    /// rows it has touched, so queries read the store through ``StoredState`` instead.
    public func rows<V: RowValue>(
        _ table: String, prefix: RowKey, reverse: Bool, limit: Int, as type: V.Type
    ) throws -> [(key: RowKey, value: V)] {
        let index = try tableIndex(table)
        var keys = tables[index].rows.keys.filter { $0.hasPrefix(prefix) && tables[index].rows[$0]?.value != nil }.sorted()
        if reverse { keys.reverse() }
        return try keys.prefix(limit).compactMap { key in
            try value(table, key, as: V.self).map { (key, $0) }
        }
    }

    public func rawRows(_ table: String) throws -> [(key: [UInt8], value: [UInt8])] {
        let index = try tableIndex(table)
        return tables[index].rows.compactMap { key, entry in entry.value.map { (key.bytes, $0.encoded) } }
            .sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }

    // MARK: Writing back (the runner)

    /// The changed rows of each table, encoded, in key order: a nil value deletes the row.
    func changes() -> [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])] {
        tables.map { table in
            let dirty = table.rows.filter { $0.value.isDirty }.sorted { $0.key < $1.key }
            return (table.name, dirty.map { ($0.key.bytes, $0.value.value?.encoded) })
        }
    }
}
