import CLMDBBench
@_spi(Records) import EventStoreCore
import Foundation

/// S1's third raw contender: this store's exact layout (docs/FORMAT.md) written with plain LMDB
/// calls. Each event: its record (the store's encoder, checksum included) reserved in `events`
/// with `MDB_APPEND`, its type in `type_index` (`MDB_APPENDDUP`), its UUIDv7 in `event_ids`
/// (`MDB_NOOVERWRITE`), a 16-position chunk in `stream_index` each 16th version, and its
/// stream's `streams` entry rewritten once per append part. What it leaves out is everything
/// but the writing: no validation, no idempotency lookup, no head read from the table (heads
/// live in an array indexed by stream), no job, no continuation. The gap between it and the log
/// alone is what this layout costs; the gap between the store and it, what the store's machinery
/// costs.
final class RawLayoutLMDB {
    private let env: OpaquePointer
    private var events: MDB_dbi = 0
    private var streamsTable: MDB_dbi = 0
    private var streamIndex: MDB_dbi = 0
    private var eventIDs: MDB_dbi = 0
    private var typeIndex: MDB_dbi = 0
    private var tailTable: MDB_dbi = 0
    private var position: UInt64 = 0
    private var versions: [UInt64]
    /// Each stream's positions not yet in a full chunk.
    private var pending: [[UInt64]]
    private let names: [[UInt8]]
    private let ids = UUIDv7Generator()
    private static let chunk = 16
    /// Tables left unwritten, to see what each costs (`esbench --s1-layout-omit`): `ids`,
    /// `types`, `heads`, `chunks`; and variants of the head, each a layout that was weighed:
    /// `fixed-heads`, each head written at its largest size (16 pending slots), so that LMDB
    /// overwrites it in place instead of deleting and inserting a node whose size changed;
    /// `small-heads`, the head without its pending positions (16 bytes: what a head would cost
    /// if those positions were kept elsewhere for free); `tail-table`, the pending positions in
    /// a table of their own keyed by stream number (with `small-heads`: the same bytes, split in
    /// two puts); `number-heads`, heads keyed by stream number instead of name.
    private let omitted: Set<String>

    init(path: String, streams: Int, names: (Int) -> String, omitting omitted: Set<String> = []) throws {
        self.omitted = omitted
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var env: OpaquePointer?
        try RawLMDB.check(mdb_env_create(&env), "create")
        guard let env else { throw RawLMDB.Failure(rc: -1, what: "create") }
        self.env = env
        mdb_env_set_maxdbs(env, 8)
        mdb_env_set_mapsize(env, 64 << 30)
        try RawLMDB.check(mdb_env_open(env, path, 0, 0o600), "open")
        versions = Array(repeating: 0, count: streams)
        pending = Array(repeating: [], count: streams)
        self.names = (0..<streams).map { Array(names($0).utf8) }
        try write { txn in
            try RawLMDB.check(mdb_dbi_open(txn, "events", UInt32(MDB_CREATE), &events), "open events")
            try RawLMDB.check(mdb_dbi_open(txn, "streams", UInt32(MDB_CREATE), &streamsTable), "open streams")
            try RawLMDB.check(mdb_dbi_open(txn, "stream_index", UInt32(MDB_CREATE), &streamIndex), "open stream_index")
            try RawLMDB.check(mdb_dbi_open(txn, "event_ids", UInt32(MDB_CREATE), &eventIDs), "open event_ids")
            try RawLMDB.check(mdb_dbi_open(txn, "stream_tail", UInt32(MDB_CREATE), &tailTable), "open stream_tail")
            try RawLMDB.check(
                mdb_dbi_open(txn, "type_index", UInt32(MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED), &typeIndex), "open type_index")
        }
    }

    deinit { mdb_env_close(env) }

    private func write(_ body: (OpaquePointer) throws -> Void) throws {
        try RawLMDB.write(env, body)
    }

    /// Appends events (stream index, type, data) in one transaction, one part per event.
    func append(_ batch: [(stream: Int, data: Data)], type: String) throws {
        let recordedAt = Int64(Date().timeIntervalSince1970 * 1_000_000)
        var typeName = type
        try typeName.withUTF8 { typeBytes in
            let type = UnsafeRawBufferPointer(typeBytes)
            try write { txn in
                for (stream, data) in batch {
                    position += 1
                    versions[stream] += 1
                    let version = versions[stream]
                    let id = ids.next()
                    try names[stream].withUnsafeBytes { name in
                        try put(txn, events, key: position, reserving: RecordCodec.encodedSize(
                            streamBytes: name.count, typeBytes: type.count, dataBytes: data.count, metadataBytes: 0)
                        ) { space in
                            RecordCodec.encode(
                                into: space, position: position, stream: name, type: type, version: version, recordedAt: recordedAt,
                                id: id, data: data, metadata: Data(), schemaVersion: 1)
                        }
                        try withUnsafeBytes(of: position.bigEndian) { positionBytes in
                            if !omitted.contains("types") { try put(txn, typeIndex, type, positionBytes, flags: UInt32(MDB_APPENDDUP)) }
                            if !omitted.contains("ids") {
                                try withUnsafeBytes(of: id.uuid) { try put(txn, eventIDs, $0, positionBytes, flags: UInt32(MDB_NOOVERWRITE)) }
                            }
                        }
                        pending[stream].append(position)
                        if pending[stream].count == Self.chunk, !omitted.contains("chunks") {
                            let key = (UInt64(stream + 1).bigEndian, (version - UInt64(Self.chunk) + 1).bigEndian)
                            let chunk = pending[stream].map(\.bigEndian)
                            try withUnsafeBytes(of: key) { key in try chunk.withUnsafeBytes { try put(txn, streamIndex, key, $0, flags: 0) } }
                            pending[stream].removeAll(keepingCapacity: true)
                        }
                        if pending[stream].count == Self.chunk { pending[stream].removeAll(keepingCapacity: true) }
                        // The head: number, version, then the pending positions.
                        if !omitted.contains("heads") {
                            var head = [UInt64(stream + 1).bigEndian, version.bigEndian]
                            if !omitted.contains("small-heads") { head += pending[stream].map(\.bigEndian) }
                            if omitted.contains("fixed-heads") { head += repeatElement(0, count: Self.chunk - pending[stream].count) }
                            if omitted.contains("tail-table") {
                                let tail = pending[stream].map(\.bigEndian)
                                try withUnsafeBytes(of: UInt64(stream + 1).bigEndian) { key in
                                    try tail.withUnsafeBytes { try put(txn, tailTable, key, $0, flags: 0) }
                                }
                            }
                            if omitted.contains("number-heads") {
                                try withUnsafeBytes(of: UInt64(stream + 1).bigEndian) { key in
                                    try head.withUnsafeBytes { try put(txn, streamsTable, key, $0, flags: 0) }
                                }
                            } else {
                                try head.withUnsafeBytes { try put(txn, streamsTable, name, $0, flags: 0) }
                            }
                        }
                    }
                }
            }
        }
    }

    private func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: UInt32) throws {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try RawLMDB.check(mdb_put(txn, dbi, &k, &v, flags), "put")
    }

    private func put(
        _ txn: OpaquePointer, _ dbi: MDB_dbi, key: UInt64, reserving size: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws {
        var keyValue = key.bigEndian
        try withUnsafeMutableBytes(of: &keyValue) { keyBytes in
            var k = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
            var v = MDB_val(mv_size: size, mv_data: nil)
            try RawLMDB.check(mdb_put(txn, dbi, &k, &v, UInt32(MDB_APPEND | MDB_RESERVE)), "put events")
            fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: size))
        }
    }
}
