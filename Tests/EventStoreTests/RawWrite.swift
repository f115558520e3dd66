import CLMDB
import Testing

/// One write transaction on a closed store's raw LMDB databases, independent of the EventStore
/// module: to leave a store as damage, another program or an older version would.
struct RawWrite {
    let txn: OpaquePointer

    /// Opens the environment in `path` (creating an empty one when there is none), runs `body`
    /// in one write transaction and commits.
    static func update(_ path: String, _ body: (RawWrite) -> Void) {
        var env: OpaquePointer?
        mdb_env_create(&env)
        mdb_env_set_maxdbs(env, 128)
        #expect(mdb_env_open(env, path, 0, 0o600) == 0)
        var txn: OpaquePointer?
        #expect(mdb_txn_begin(env, nil, 0, &txn) == 0)
        if let txn { body(RawWrite(txn: txn)) }
        #expect(mdb_txn_commit(txn) == 0)
        mdb_env_close(env)
    }

    /// The handle of a named database (nil: the main database).
    func dbi(_ name: String?) -> MDB_dbi {
        var dbi: MDB_dbi = 0
        #expect(mdb_dbi_open(txn, name, 0, &dbi) == 0, "no database \(name ?? "main")")
        return dbi
    }

    /// Drops a named database (as a store written before it lacks it).
    func drop(_ name: String) {
        var dbi: MDB_dbi = 0
        #expect(mdb_dbi_open(txn, name, UInt32(MDB_DUPSORT | MDB_DUPFIXED), &dbi) == 0, "no database \(name)")
        #expect(mdb_drop(txn, dbi, 1) == 0)
    }

    func get(_ dbi: MDB_dbi, _ key: [UInt8]) -> [UInt8]? {
        var keyBytes = key
        return keyBytes.withUnsafeMutableBytes { kb -> [UInt8]? in
            var keyVal = MDB_val(mv_size: kb.count, mv_data: kb.baseAddress)
            var dataVal = MDB_val()
            guard mdb_get(txn, dbi, &keyVal, &dataVal) == 0 else { return nil }
            return Array(UnsafeRawBufferPointer(start: dataVal.mv_data, count: dataVal.mv_size))
        }
    }

    func put(_ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8]) {
        var keyBytes = key
        var valueBytes = value
        keyBytes.withUnsafeMutableBytes { kb in
            valueBytes.withUnsafeMutableBytes { vb in
                var keyVal = MDB_val(mv_size: kb.count, mv_data: kb.baseAddress)
                var dataVal = MDB_val(mv_size: vb.count, mv_data: vb.baseAddress)
                #expect(mdb_put(txn, dbi, &keyVal, &dataVal, 0) == 0)
            }
        }
    }

    func delete(_ dbi: MDB_dbi, _ key: [UInt8]) {
        var keyBytes = key
        keyBytes.withUnsafeMutableBytes { kb in
            var keyVal = MDB_val(mv_size: kb.count, mv_data: kb.baseAddress)
            #expect(mdb_del(txn, dbi, &keyVal, nil) == 0)
        }
    }

    /// Every key and value of a database, in key order.
    func entries(_ dbi: MDB_dbi) -> [(key: [UInt8], value: [UInt8])] {
        var cursor: OpaquePointer?
        guard mdb_cursor_open(txn, dbi, &cursor) == 0 else { return [] }
        defer { mdb_cursor_close(cursor) }
        var entries: [(key: [UInt8], value: [UInt8])] = []
        var key = MDB_val()
        var value = MDB_val()
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, op) == 0 {
            entries.append((
                Array(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)),
                Array(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))))
            op = MDB_NEXT
        }
        return entries
    }
}
