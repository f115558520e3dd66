import CLMDBBench
import Foundation

/// LMDB through its C API, two ways. Naive (the default): the same tables as the store (the log
/// keyed by position, and a stream index keyed by stream number and version) written the
/// simplest way: one index entry per event (the store writes chunks of positions) and a record
/// allocated per event. Log only: nothing but the log, appended with `MDB_APPEND` from one
/// reused buffer: the physical limit of writing these records with LMDB. Neither validates,
/// checks idempotency or checksums; versions are kept in memory.
final class RawLMDB {
    struct Failure: Error, CustomStringConvertible {
        let rc: Int32
        let what: String
        var description: String { "\(what): LMDB \(rc) \(String(cString: mdb_strerror(rc)))" }
    }

    private let env: OpaquePointer
    private var log: MDB_dbi = 0
    private var index: MDB_dbi = 0
    private var versions: [UInt64]
    private var position: UInt64 = 0
    /// Whether only the log is written (the physical limit), not the stream index.
    private let logOnly: Bool
    /// The record buffer the log-only appends reuse.
    private var record: [UInt8] = []

    /// Opens (creating) an environment with the tables "log" and "index"; `durable` chooses full
    /// syncs or MDB_NOSYNC.
    init(path: String, streams: Int, durable: Bool = true, logOnly: Bool = false) throws {
        self.logOnly = logOnly
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var env: OpaquePointer?
        try Self.check(mdb_env_create(&env), "create")
        guard let env else { throw Failure(rc: -1, what: "create") }
        self.env = env
        mdb_env_set_maxdbs(env, 4)
        mdb_env_set_mapsize(env, 64 << 30)
        try Self.check(mdb_env_open(env, path, durable ? 0 : UInt32(MDB_NOSYNC), 0o600), "open")
        versions = Array(repeating: 0, count: streams)
        try write { txn in
            try Self.check(mdb_dbi_open(txn, "log", UInt32(MDB_CREATE), &log), "open log")
            try Self.check(mdb_dbi_open(txn, "index", UInt32(MDB_CREATE), &index), "open index")
        }
    }

    /// Opens an existing environment read-only, for scans of the store's own log.
    init(readOnly path: String) throws {
        var env: OpaquePointer?
        try Self.check(mdb_env_create(&env), "create")
        guard let env else { throw Failure(rc: -1, what: "create") }
        self.env = env
        mdb_env_set_maxdbs(env, 128)
        try Self.check(mdb_env_open(env, path, UInt32(MDB_RDONLY), 0o600), "open")
        versions = []
        logOnly = false
    }

    deinit { mdb_env_close(env) }

    static func check(_ rc: Int32, _ what: String) throws {
        guard rc == 0 else { throw Failure(rc: rc, what: what) }
    }

    private func write(_ body: (OpaquePointer) throws -> Void) throws {
        try Self.write(env, body)
    }

    /// Runs `body` in a write transaction of `env`: committed when it returns, aborted when it throws.
    static func write(_ env: OpaquePointer, _ body: (OpaquePointer) throws -> Void) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "begin")
        guard let txn else { return }
        do {
            try body(txn)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn), "commit")
    }

    /// Appends events (stream index, data) in one transaction.
    func append(_ events: [(stream: Int, data: Data)]) throws {
        if logOnly { return try appendToLog(events) }
        try write { txn in
            for (stream, data) in events {
                position += 1
                versions[stream] += 1
                var key = position.bigEndian
                var indexKey = (UInt64(stream + 1).bigEndian, versions[stream].bigEndian)
                var value = (UInt64(stream + 1).bigEndian, versions[stream].bigEndian)
                try withUnsafeMutableBytes(of: &key) { keyBytes in
                    try data.withUnsafeBytes { bytes in
                        // The record: stream number, version, then the data (like the store's header, shorter).
                        var record = [UInt8](repeating: 0, count: 16 + bytes.count)
                        withUnsafeBytes(of: &value) { record.replaceSubrange(0..<16, with: $0) }
                        record.replaceSubrange(16..., with: bytes)
                        try record.withUnsafeMutableBytes { recordBytes in
                            var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                            var v = MDB_val(mv_size: recordBytes.count, mv_data: recordBytes.baseAddress)
                            try Self.check(mdb_put(txn, log, &k, &v, UInt32(MDB_APPEND)), "put log")
                        }
                    }
                    try withUnsafeMutableBytes(of: &indexKey) { indexKeyBytes in
                        var k = MDB_val(mv_size: 16, mv_data: indexKeyBytes.baseAddress)
                        var v = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                        try Self.check(mdb_put(txn, index, &k, &v, 0), "put index")
                    }
                }
            }
        }
    }

    /// Appends the records alone, from one reused buffer.
    private func appendToLog(_ events: [(stream: Int, data: Data)]) throws {
        try write { txn in
            for (stream, data) in events {
                position += 1
                versions[stream] += 1
                let header = (UInt64(stream + 1).bigEndian, versions[stream].bigEndian)
                record.removeAll(keepingCapacity: true)
                withUnsafeBytes(of: header) { record.append(contentsOf: $0) }
                record.append(contentsOf: data)
                var key = position.bigEndian
                try withUnsafeMutableBytes(of: &key) { keyBytes in
                    try record.withUnsafeMutableBytes { recordBytes in
                        var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                        var v = MDB_val(mv_size: recordBytes.count, mv_data: recordBytes.baseAddress)
                        try Self.check(mdb_put(txn, log, &k, &v, UInt32(MDB_APPEND)), "put log")
                    }
                }
            }
        }
    }

    /// The data of the last `count` events of a stream, newest first (one read transaction).
    func lastEvents(stream: Int, count: Int) throws -> Int {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "begin read")
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        try Self.check(mdb_cursor_open(txn, index, &cursor), "cursor")
        defer { mdb_cursor_close(cursor) }
        var seekKey = (UInt64(stream + 2).bigEndian, UInt64(0))
        var bytes = 0
        try withUnsafeMutableBytes(of: &seekKey) { raw in
            var key = MDB_val(mv_size: 16, mv_data: raw.baseAddress)
            var value = MDB_val()
            var rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            rc = rc == 0 ? mdb_cursor_get(cursor, &key, &value, MDB_PREV) : mdb_cursor_get(cursor, &key, &value, MDB_LAST)
            var found = 0
            while rc == 0 && found < count {
                var record = MDB_val()
                try Self.check(mdb_get(txn, log, &value, &record), "get")
                bytes += record.mv_size
                found += 1
                rc = mdb_cursor_get(cursor, &key, &value, MDB_PREV)
            }
        }
        return bytes
    }

    /// Walks a table with a cursor, reading each value's first 16 bytes (a header decode);
    /// returns the entries seen. `table` is "log" for this contender, "events" for the store.
    func scan(table: String) throws -> Int {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "begin read")
        defer { mdb_txn_abort(txn) }
        var dbi: MDB_dbi = 0
        try Self.check(mdb_dbi_open(txn, table, 0, &dbi), "open \(table)")
        var cursor: OpaquePointer?
        try Self.check(mdb_cursor_open(txn, dbi, &cursor), "cursor")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var count = 0
        var checksum: UInt64 = 0
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == 0 {
            if value.mv_size >= 16, let base = value.mv_data {
                checksum &+= base.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
            count += 1
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if checksum == 42 { print("") }  // keep the reads from being optimised away
        return count
    }
}
