/// The state hash: SHA-256 over a canonical encoding of a projection's whole state, so that two
/// states are equal exactly when their hashes are. `docs/FORMAT.md` documents the encoding:
///
/// for each table, in byte order of the names: the name's length (u32 big-endian), the name, the
/// number of rows (u64 big-endian); then each row in key order: the key's length (u32), the key,
/// the value's length (u32), the value.
public enum StateHash {
    /// The hash of a projection's state, as 64 lowercase hexadecimal digits.
    public static func of(tables: [String], in state: some StateReader) async throws -> String {
        var hasher = SHA256()
        for table in tables.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            hasher.update(bytes(UInt32(table.utf8.count)))
            hasher.update(table.utf8)
            hasher.update(bytes(UInt64(try await state.rowCount(table))))
            // Row by row, so hashing a large state holds no copy of it.
            try await state.forEachRawRow(table) { key, value in
                hasher.update(bytes(UInt32(key.count)))
                hasher.update(key)
                hasher.update(bytes(UInt32(value.count)))
                hasher.update(value)
            }
        }
        return SHA256.hexString(hasher.finalize())
    }

    /// The hash of a projection's state: its tables, and its passed-over events when it has any
    /// (so a projection that never passed one over hashes as its tables alone).
    public static func of(_ projection: any Projection, in state: some StateReader) async throws -> String {
        let passedOver = try await state.rowCount(PassedOver.table) > 0
        return try await of(tables: projection.tables + (passedOver ? [PassedOver.table] : []), in: state)
    }

    private static func bytes(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    private static func bytes(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
}
