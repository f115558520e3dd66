import CLMDB
import EventStore
import Foundation
import Testing
import TestSupport

/// Reads a store with nothing but LMDB and docs/FORMAT.md, as a program in another language would,
/// and checks the document's worked example against the bytes on disk.
@Suite("docs/FORMAT.md matches the bytes on disk")
struct FormatDocumentTests {
    /// The worked example of the document: one event, appended to a new store.
    static func writeExample(to path: String) async throws {
        let store = try EventStore(
            path: path,
            configuration: StoreConfiguration(
                durability: .full, clock: { Date(timeIntervalSince1970: 1_767_225_600) },
                idGenerator: { SequentialIDs.id(1) }))
        _ = try await store.append(
            to: "orders-1",
            events: [NewEvent(type: "OrderPlaced", data: Data(#"{"total":12}"#.utf8), metadata: Data(#"{"by":"ann"}"#.utf8))])
        await store.close()
    }

    @Test("a record decoded from raw LMDB bytes by following the document")
    func decodeByTheDocument() async throws {
        let directory = try TemporaryDirectory()
        try await Self.writeExample(to: directory.path)
        let raw = try RawLMDB(path: directory.path)
        defer { raw.close() }

        // meta: "format" -> u32 BE 4
        #expect(try raw.get("meta", Array("format".utf8)) == [0, 0, 0, 4])

        // streams: name -> u64 stream number, u64 last version, the pending positions (version mod 16 of them)
        let head = try #require(try raw.get("streams", Array("orders-1".utf8)))
        #expect(head.count == 24)
        let streamNumber = be64(head, 0)
        #expect(streamNumber == 1)
        #expect(be64(head, 8) == 1)
        let position = Array(head[16..<24])
        #expect(position == bytes(of: 1))

        // stream_index: nothing until a chunk of 16 versions is full
        #expect(try raw.get("stream_index", bytes(of: streamNumber) + bytes(of: 1)) == nil)

        // event_ids: 16-byte id -> u64 position
        let id = withUnsafeBytes(of: SequentialIDs.id(1).uuid) { Array($0) }
        #expect(try raw.get("event_ids", id) == bytes(of: 1))

        // events: u64 position -> record, laid out as the document's table says
        let record = try #require(try raw.get("events", position))
        #expect(record[0] == 2)  // record format
        #expect(record[1] == 0)  // flags
        let streamLength = Int(be16(record, 2))
        let typeLength = Int(be16(record, 4))
        #expect(be16(record, 6) == 0)
        #expect(be64(record, 8) == 1)  // stream version
        #expect(Int64(bitPattern: be64(record, 16)) == 1_767_225_600_000_000)  // microseconds
        #expect(Array(record[24..<40]) == id)
        let dataLength = Int(be32(record, 40))
        let metadataLength = Int(be32(record, 44))
        var offset = 48
        let stream = String(decoding: record[offset..<(offset + streamLength)], as: UTF8.self)
        offset += streamLength
        let type = String(decoding: record[offset..<(offset + typeLength)], as: UTF8.self)
        offset += typeLength
        let data = String(decoding: record[offset..<(offset + dataLength)], as: UTF8.self)
        offset += dataLength
        let metadata = String(decoding: record[offset..<(offset + metadataLength)], as: UTF8.self)
        offset += metadataLength
        // The checksum: CRC-32C of the position's 8 bytes and the record before it, big-endian.
        #expect(offset + 4 == record.count)
        #expect(be32(record, offset) == crc32c(position + Array(record[0..<offset])))
        #expect(stream == "orders-1")
        #expect(type == "OrderPlaced")
        #expect(data == #"{"total":12}"#)
        #expect(metadata == #"{"by":"ann"}"#)
    }

    @Test("a full chunk of the stream index is where the document says")
    func chunkByTheDocument() async throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.path, configuration: StoreConfiguration(durability: .noSync))
        _ = try await store.append(to: "s", events: (1...20).map { NewEvent(type: "T", data: Data("{\"n\":\($0)}".utf8)) })
        await store.close()
        let raw = try RawLMDB(path: directory.path)
        defer { raw.close() }
        let head = try #require(try raw.get("streams", Array("s".utf8)))
        #expect(head == bytes(of: 1) + bytes(of: 20) + (17...20).flatMap { bytes(of: UInt64($0)) })
        let chunk = try #require(try raw.get("stream_index", bytes(of: 1) + bytes(of: 1)))
        #expect(chunk == (1...16).flatMap { bytes(of: UInt64($0)) })
        let document = try Documents.text("docs/FORMAT.md")
        let example = try #require(Documents.block(named: "chunk-example", in: document))
        #expect(example.contains("key    " + (bytes(of: 1) + bytes(of: 1)).map { String(format: "%02x", $0) }.joined(separator: " ")))
    }

    @Test("the worked example's hex dump in the document is the record on disk")
    func workedExampleHexMatches() async throws {
        let directory = try TemporaryDirectory()
        try await Self.writeExample(to: directory.path)
        let raw = try RawLMDB(path: directory.path)
        defer { raw.close() }
        let record = try #require(try raw.get("events", bytes(of: 1)))

        let document = try Documents.text("docs/FORMAT.md")
        let hex = try #require(Documents.block(named: "record-hex", in: document), "FORMAT.md lost its record-hex block")
        let documented = hex.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { UInt8($0, radix: 16) }
        #expect(documented == record, "FORMAT.md's example record differs from the bytes on disk")
    }

    @Test("every named database the document lists exists in a new store, and no other")
    func documentedDatabasesExist() async throws {
        let directory = try TemporaryDirectory()
        try await Self.writeExample(to: directory.path)
        let raw = try RawLMDB(path: directory.path)
        defer { raw.close() }
        let document = try Documents.text("docs/FORMAT.md")
        let listed = try #require(Documents.block(named: "databases", in: document))
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        #expect(Set(listed) == Set(try raw.mainDatabaseKeys()))
    }

}

/// CRC-32C bit by bit, as the document defines it, independent of the store's own code.
func crc32c(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc >> 1) ^ (0x82F6_3B78 & (0 &- (crc & 1))) }
    }
    return ~crc
}

func bytes(of value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
func be16(_ b: [UInt8], _ at: Int) -> UInt16 { b[at..<(at + 2)].reduce(0) { $0 << 8 | UInt16($1) } }
func be32(_ b: [UInt8], _ at: Int) -> UInt32 { b[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
func be64(_ b: [UInt8], _ at: Int) -> UInt64 { b[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) } }

/// A plain LMDB reader, independent of the EventStore module.
final class RawLMDB {
    struct Failure: Error { let rc: Int32 }
    let env: OpaquePointer

    init(path: String) throws {
        var env: OpaquePointer?
        guard mdb_env_create(&env) == 0, let env else { throw Failure(rc: -1) }
        mdb_env_set_maxdbs(env, 16)
        let rc = mdb_env_open(env, path, UInt32(MDB_RDONLY), 0o600)
        guard rc == 0 else {
            mdb_env_close(env)
            throw Failure(rc: rc)
        }
        self.env = env
    }

    func close() { mdb_env_close(env) }

    func get(_ database: String, _ key: [UInt8]) throws -> [UInt8]? {
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0 else { throw Failure(rc: -2) }
        defer { mdb_txn_abort(txn) }
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, database, 0, &dbi)
        guard rc == 0 else { throw Failure(rc: rc) }
        var keyBytes = key
        return try keyBytes.withUnsafeMutableBytes { k in
            var keyVal = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
            var dataVal = MDB_val()
            let rc = mdb_get(txn, dbi, &keyVal, &dataVal)
            if rc == MDB_NOTFOUND { return nil }
            guard rc == 0 else { throw Failure(rc: rc) }
            return Array(UnsafeRawBufferPointer(start: dataVal.mv_data, count: dataVal.mv_size))
        }
    }

    /// The names in the main database: the named databases.
    func mainDatabaseKeys() throws -> [String] {
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0 else { throw Failure(rc: -2) }
        defer { mdb_txn_abort(txn) }
        var dbi: MDB_dbi = 0
        guard mdb_dbi_open(txn, nil, 0, &dbi) == 0 else { throw Failure(rc: -3) }
        var cursor: OpaquePointer?
        guard mdb_cursor_open(txn, dbi, &cursor) == 0 else { throw Failure(rc: -4) }
        defer { mdb_cursor_close(cursor) }
        var names: [String] = []
        var key = MDB_val()
        var value = MDB_val()
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, op) == 0 {
            names.append(String(decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), as: UTF8.self))
            op = MDB_NEXT
        }
        return names
    }
}
