import EventStoreCore

/// A projection's tables as `apply` sees them: rows are read from the stored state (or start
/// empty, for a state folded in memory) and changes are kept here, decoded, until the runner
/// writes them together with the checkpoint. A row changed many times in one batch is changed in
/// place and encoded once.
public struct ProjectionState {
    /// One row as this state knows it.
    private struct Entry {
        /// The value, or nil for a deleted row.
        var box: RowBox?
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
        self.init(projection: projection.name, tables: projection.tables + [PassedOver.table], stored: nil)
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
            guard let box = entry.box else { return nil }
            if let typed = box.typed(as: V.self) { return typed.value }
            return try decode(box.encoded(), table, as: V.self)
        }
        guard let stored, let bytes = try stored(table, key.bytes) else { return nil }
        let value = try decode(bytes, table, as: V.self)
        tables[index].rows[key] = Entry(box: TypedRowBox(value), isDirty: false)
        return value
    }

    /// Stores `value` under `key`.
    public mutating func put<V: RowValue>(_ table: String, _ key: RowKey, _ value: V) throws {
        let index = try tableIndex(table)
        try checkKey(key, table)
        if isRecordingUndo { recordUndo(index, key) }
        let missing = Entry(box: nil, isDirty: false)
        // One lookup: the entry is changed where it lies, its box reused when it holds a V.
        modify(&tables[index].rows[key, default: missing]) { entry in
            if let typed = entry.box?.typed(as: V.self) {
                typed.value = value
            } else {
                entry.box = TypedRowBox(value)
            }
            entry.isDirty = true
        }
    }

    /// Removes the row under `key`, if there is one.
    public mutating func delete(_ table: String, _ key: RowKey) throws {
        let index = try tableIndex(table)
        try checkKey(key, table)
        if isRecordingUndo { recordUndo(index, key) }
        tables[index].rows[key] = Entry(box: nil, isDirty: true)
    }

    @inline(__always)
    private func modify<T>(_ value: inout T, _ body: (inout T) -> Void) { body(&value) }

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
        try apply(event, with: projection, undoable: true)
    }

    /// Applies `event`; with `undoable` false a failed apply may leave its changes behind (for a
    /// caller that then throws the whole state away), which spares recording them.
    mutating func apply(_ event: RecordedEvent, with projection: some Projection, undoable: Bool) throws {
        try apply(event, undoable: undoable) { event, state in try projection.apply(event, to: &state) }
    }

    /// Applies `event` with an `apply` function (the runner keeps one per projection, so the
    /// projection value is not copied for every event).
    mutating func apply(
        _ event: RecordedEvent, undoable: Bool, _ apply: (RecordedEvent, inout ProjectionState) throws -> Void
    ) throws {
        guard undoable else {
            try apply(event, &self)
            return
        }
        undoLog.removeAll(keepingCapacity: true)
        isRecordingUndo = true
        defer { isRecordingUndo = false }
        do {
            try apply(event, &self)
        } catch {
            undo()
            throw error
        }
    }

    /// Applies events in order (the projection's event types only), as the runner does: under
    /// the ``ProjectionErrorPolicy/skip`` policy an event whose `apply` throws is undone and
    /// recorded in ``PassedOver/table``. Operators' decisions to pass over an event live in the
    /// store, so they are not applied here (``ProjectionRunner/state(of:asOf:)`` applies them).
    ///
    /// Throws what `apply` throws under ``ProjectionErrorPolicy/stop``, and the engine's own
    /// ``ProjectionError`` under either policy.
    public mutating func fold(_ events: some Sequence<RecordedEvent>, with projection: some Projection) throws {
        let policy = projection.errorPolicy
        for event in events where projection.eventTypes?.contains(event.type) ?? true {
            _ = try apply(event, policy: policy, decision: nil) { event, state in try projection.apply(event, to: &state) }
        }
    }

    /// Applies `event` as the runner does and says whether it was passed over: by an operator's
    /// `decision` (nothing applied), or because `apply` threw under the `.skip` policy (its
    /// changes undone); either is recorded in ``PassedOver/table``. Rethrows the engine's own
    /// errors, and what `apply` throws under `.stop` (then the state may keep the failed event's
    /// changes: the caller throws it away).
    ///
    /// With `rowsMissing` (a backend whose rows are not at hand, see ``RowCache``): when it says
    /// after `apply` that a row was asked for that was not at hand, whatever the event did is
    /// undone (whatever `apply` made of the missing row) and nil is returned, for the caller to
    /// load the rows and apply the event again.
    mutating func apply(
        _ event: RecordedEvent, policy: ProjectionErrorPolicy, decision: PassedOver.Decision?, rowsMissing: (() -> Bool)? = nil,
        _ apply: (RecordedEvent, inout ProjectionState) throws -> Void
    ) throws -> Bool? {
        try self.apply(event, at: event.position, policy: policy, decision: decision, rowsMissing: rowsMissing, apply)
    }

    /// The same for an event in any form (a view read in place, on a typed projection's fast
    /// path), at `position`.
    mutating func apply<Event>(
        _ event: Event, at position: UInt64, policy: ProjectionErrorPolicy, decision: PassedOver.Decision?, rowsMissing: (() -> Bool)? = nil,
        _ apply: (Event, inout ProjectionState) throws -> Void
    ) throws -> Bool? {
        if let decision {
            try put(PassedOver.table, PassedOver.key(position), "passed over by decision: \(decision.reason)")
            return true
        }
        let undoable = policy == .skip || rowsMissing != nil
        guard undoable else {
            try apply(event, &self)
            return false
        }
        undoLog.removeAll(keepingCapacity: true)
        isRecordingUndo = true
        var failure: (any Error)?
        do {
            try apply(event, &self)
        } catch {
            failure = error
        }
        isRecordingUndo = false
        if failure != nil || rowsMissing?() == true { undo() }
        if rowsMissing?() == true { return nil }
        guard let failure else { return false }
        // The engine's own errors (a damaged row, an undeclared table) always stop: passing
        // over them would hide damage.
        guard policy == .skip, !(failure is ProjectionError) else { throw failure }
        try put(PassedOver.table, PassedOver.key(position), "\(failure)")
        return true
    }

    /// Undoes the changes of the event being applied.
    private mutating func undo() {
        for undo in undoLog.reversed() {
            tables[undo.table].rows[undo.key] = undo.previous
        }
        undoLog.removeAll(keepingCapacity: true)
    }

    /// Remembers the row under `key` as it is before this event changes it: a copy, since rows
    /// are changed in place.
    private mutating func recordUndo(_ table: Int, _ key: RowKey) {
        let previous = tables[table].rows[key].map { Entry(box: $0.box?.copy(), isDirty: $0.isDirty) }
        undoLog.append(Undo(table: table, key: key, previous: previous))
    }

    // MARK: Reading (a StateReader over this state)

    /// The state as a ``StateReader``, for queries of a state folded in memory (`query` with
    /// `asOf`, tests).
    /// How many rows this state holds in memory (read or changed): a catch-up batch stops
    /// growing there, so that its commit stays a short write.
    var touchedRowCount: Int { tables.reduce(0) { $0 + $1.rows.count } }

    public var reader: some StateReader { InMemoryReader(state: self) }

    func peek<V: RowValue>(_ table: String, _ key: RowKey, as type: V.Type) throws -> V? {
        let index = try tableIndex(table)
        if let entry = tables[index].rows[key] {
            guard let box = entry.box else { return nil }
            return try box.typed(as: V.self)?.value ?? decode(box.encoded(), table, as: V.self)
        }
        guard let stored, let bytes = try stored(table, key.bytes) else { return nil }
        return try decode(bytes, table, as: V.self)
    }

    /// Rows of a state held in memory, in key order. A state backed by the store lists only the
    /// rows it has touched, so queries read the store through ``StoredState`` instead.
    func forEachRow<V: RowValue>(
        _ table: String, prefix: RowKey, after: RowKey?, reverse: Bool, as type: V.Type, _ body: (RowKey, V) throws -> Bool
    ) throws {
        let index = try tableIndex(table)
        var keys = tables[index].rows.filter { $0.key.hasPrefix(prefix) && $0.value.box != nil }.map(\.key).sorted()
        if reverse { keys.reverse() }
        if let after { keys.removeAll { reverse ? !($0 < after) : !(after < $0) } }
        for key in keys {
            guard let value = try peek(table, key, as: V.self) else { continue }
            guard try body(key, value) else { return }
        }
    }

    func rowCount(_ table: String) throws -> Int {
        let index = try tableIndex(table)
        return tables[index].rows.values.filter { $0.box != nil }.count
    }

    func forEachRawRow(_ table: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        let index = try tableIndex(table)
        var rows: [([UInt8], [UInt8])] = []
        for (key, entry) in tables[index].rows {
            if let box = entry.box { rows.append((key.bytes, try encode(box, table))) }
        }
        rows.sort { RowKey.precedes($0.0, $1.0) }
        for (key, value) in rows {
            try key.withUnsafeBytes { keyBytes in try value.withUnsafeBytes { try body(keyBytes, $0) } }
        }
    }

    // MARK: Writing back (the runner)

    /// The changed rows of each table, encoded, in key order: a nil value deletes the row.
    ///
    /// Throws ``ProjectionError/Code/invalidDefinition`` for a row whose value cannot be written.
    func changes() throws(ProjectionError) -> [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])] {
        var changes: [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])] = []
        for table in tables {
            var dirty: [(key: [UInt8], value: [UInt8]?)] = []
            dirty.reserveCapacity(table.rows.count)
            for (key, entry) in table.rows where entry.isDirty {
                dirty.append((key.bytes, try entry.box.map { box throws(ProjectionError) in try encode(box, table.name) }))
            }
            dirty.sort { RowKey.precedes($0.key, $1.key) }
            changes.append((table.name, dirty))
        }
        return changes
    }

    /// A row's bytes; throws ``ProjectionError/Code/invalidDefinition`` when its value could not
    /// be written.
    private func encode(_ box: RowBox, _ table: String) throws(ProjectionError) -> [UInt8] {
        let writer = box.written()
        if let failure = writer.failure {
            throw ProjectionError(
                .invalidDefinition, "The projection '\(projection)' put a row in '\(table)' that cannot be stored: \(failure).",
                projection: projection)
        }
        return writer.bytes
    }
}

/// A decoded row in a class, so repeated changes in a batch change it in place.
class RowBox {
    /// The type of the value a ``TypedRowBox`` holds.
    let valueType: ObjectIdentifier

    /// Only ``TypedRowBox`` makes boxes, with its own `V`: ``typed(as:)`` trusts the type.
    fileprivate init(valueType: ObjectIdentifier) {
        self.valueType = valueType
    }

    /// This box as a box of `V` values, or nil. Why not `as? TypedRowBox<V>`: in code not
    /// specialized for `V` (a projection's `apply` calls `get` and `put` across modules) that
    /// cast looks the generic class's metadata up in the runtime's cache at every call, 2.5 % of
    /// a rebuild's fold in a profile (BENCHMARKS.md, "S3: the envelope in one pass, the state
    /// without metadata lookups"); comparing the value's type needs no lookup.
    @inline(__always)
    final func typed<V: RowValue>(as type: V.Type) -> TypedRowBox<V>? {
        valueType == ObjectIdentifier(V.self) ? unsafeDowncast(self, to: TypedRowBox<V>.self) : nil
    }

    func encoded() -> [UInt8] { written().bytes }
    func written() -> RowWriter { RowWriter() }
    func copy() -> RowBox { self }
}

/// A row of values of type `V`.
final class TypedRowBox<V: RowValue>: RowBox {
    var value: V

    init(_ value: V) {
        self.value = value
        super.init(valueType: ObjectIdentifier(V.self))
    }

    override func written() -> RowWriter {
        var writer = RowWriter()
        value.encode(to: &writer)
        return writer
    }
    override func copy() -> RowBox { TypedRowBox(value) }
}

/// A state folded in memory, read as a ``StateReader``.
private struct InMemoryReader: StateReader {
    let state: ProjectionState

    func get<V: RowValue>(_ table: String, _ key: RowKey, as type: V.Type) throws -> V? {
        try state.peek(table, key, as: type)
    }

    func forEachRow<V: RowValue>(
        _ table: String, prefix: RowKey, after: RowKey?, reverse: Bool, as type: V.Type, _ body: (RowKey, V) throws -> Bool
    ) throws {
        try state.forEachRow(table, prefix: prefix, after: after, reverse: reverse, as: type, body)
    }

    func rowCount(_ table: String) throws -> Int { try state.rowCount(table) }

    func forEachRawRow(_ table: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        try state.forEachRawRow(table, body)
    }
}
