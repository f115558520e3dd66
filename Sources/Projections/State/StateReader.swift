import EventStoreCore

/// Read access to a projection's tables: the stored state (``StoredState``) or a state folded in
/// memory (``ProjectionState``). Queries are written against this. Its reads are async: on
/// PostgreSQL each is a round trip that holds no thread while it waits.
public protocol StateReader {
    /// The row under `key`, decoded as `V`; nil when there is none.
    func get<V: RowValue>(_ table: String, _ key: RowKey, as type: V.Type) async throws -> V?
    /// Visits the rows whose keys start with `prefix`, in key order (or reverse), until `body`
    /// returns false; with `after`, only those past that key in the scan's direction (how a
    /// page continues where the last one ended). Nothing is held but the row in hand.
    func forEachRow<V: RowValue>(
        _ table: String, prefix: RowKey, after: RowKey?, reverse: Bool, as type: V.Type, _ body: (RowKey, V) throws -> Bool
    ) async throws
    /// The number of rows of a table.
    func rowCount(_ table: String) async throws -> Int
    /// Visits every row of a table as bytes, in key order, without holding them all (for the
    /// state hash). The bytes are valid only during each call of `body`.
    func forEachRawRow(_ table: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) async throws
}

extension StateReader {
    /// Every row of a table as bytes, in key order.
    public func rawRows(_ table: String) async throws -> [(key: [UInt8], value: [UInt8])] {
        var rows: [(key: [UInt8], value: [UInt8])] = []
        try await forEachRawRow(table) { key, value in rows.append((Array(key), Array(value))) }
        return rows
    }
}

extension StateReader {
    /// The rows whose keys start with `prefix`, in key order (or reverse), at most `limit`.
    public func rows<V: RowValue>(
        _ table: String, prefix: RowKey, reverse: Bool, limit: Int, as type: V.Type
    ) async throws -> [(key: RowKey, value: V)] {
        var found: [(key: RowKey, value: V)] = []
        guard limit > 0 else { return found }
        try await forEachRow(table, prefix: prefix, after: nil, reverse: reverse, as: type) { key, value in
            found.append((key, value))
            return found.count < limit
        }
        return found
    }

    /// The row under `key`, decoded as the type the caller expects; nil when there is none.
    public func get<V: RowValue>(_ table: String, _ key: RowKey) async throws -> V? {
        try await get(table, key, as: V.self)
    }

    /// The rows whose keys start with `prefix`, in key order.
    public func rows<V: RowValue>(_ table: String, prefix: RowKey = RowKey(), as type: V.Type) async throws -> [(key: RowKey, value: V)] {
        try await rows(table, prefix: prefix, reverse: false, limit: .max, as: type)
    }
}

/// A projection's stored tables, read in one snapshot of the store.
public struct StoredState: StateReader {
    let transaction: TableTransaction
    let projection: String
    /// Which of the projection's two sets of tables (see `Checkpoint.generation`).
    let generation: Int

    init(transaction: TableTransaction, projection: String, generation: Int) {
        self.transaction = transaction
        self.projection = projection
        self.generation = generation
    }

    /// The state that answers queries: the generation its checkpoint names.
    static func serving(_ transaction: TableTransaction, _ projection: String) async throws -> StoredState {
        let generation = try await CatchUpBatch.readCheckpoint(projection, transaction)?.generation ?? 0
        return StoredState(transaction: transaction, projection: projection, generation: generation)
    }

    /// The store's name for one of the projection's tables: `PROJECTION/TABLE` in generation 0,
    /// `PROJECTION~1/TABLE` in generation 1 ('~' is not allowed in a projection's name).
    static func tableName(_ projection: String, _ table: String, generation: Int) -> String {
        generation == 0 ? "\(projection)/\(table)" : "\(projection)~\(generation)/\(table)"
    }

    private func tableName(_ table: String) -> String { Self.tableName(projection, table, generation: generation) }

    public func get<V: RowValue>(_ table: String, _ key: RowKey, as type: V.Type) async throws -> V? {
        let bytes = try await transaction.get(tableName(table), key.bytes)
        return try bytes.map { bytes in
            do { return try V(decoding: bytes) } catch { throw ProjectionError.damaged(projection, "\(table): \(error)") }
        }
    }

    public func forEachRow<V: RowValue>(
        _ table: String, prefix: RowKey, after: RowKey?, reverse: Bool, as type: V.Type, _ body: (RowKey, V) throws -> Bool
    ) async throws {
        var failure: RowDecodingError?
        try await transaction.scan(tableName(table), prefix: prefix.bytes, after: after?.bytes, reverse: reverse) { key, value in
            let row: V
            do throws(RowDecodingError) {
                row = try V(decoding: value)
            } catch {
                failure = error
                return false
            }
            return try body(RowKey(bytes: Array(key)), row)
        }
        if let failure { throw ProjectionError.damaged(projection, "\(table): \(failure)") }
    }

    public func rowCount(_ table: String) async throws -> Int {
        try await transaction.count(tableName(table))
    }

    /// Visits a table's rows as bytes, in key order, after `after` (from the start when nil),
    /// until `body` returns false: how a face that knows none of the projection's row types (the
    /// console's table view) pages through any table, holding no row but the one in hand. The
    /// bytes are valid only during each call of `body`.
    public func forEachRawRow(
        _ table: String, after: RowKey?, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) async throws {
        try await transaction.scan(tableName(table), prefix: [], after: after?.bytes, reverse: false, body)
    }

    static let releaseEveryBytes = 512 << 10

    public func forEachRawRow(_ table: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) async throws {
        var visitedBytes = 0
        try await transaction.scan(tableName(table)) { key, value in
            try body(key, value)
            // A whole state is read once: keep only the latest pages resident. Counted in bytes,
            // since rows range from a few bytes to kilobytes; often, since each page fault maps
            // its neighbours too (the kernel's fault-around), which a B-tree's leaves are not.
            visitedBytes += key.count + value.count
            if visitedBytes >= Self.releaseEveryBytes {
                visitedBytes = 0
                transaction.releaseReadPages()
            }
            return true
        }
    }
}

