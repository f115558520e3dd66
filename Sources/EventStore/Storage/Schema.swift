/// The named LMDB databases of a store, and the byte layout of their keys and values.
/// `docs/FORMAT.md` documents the same layout for readers in other languages; keep both in step.
enum Schema {
    /// The version written under the meta key `format` by this version: 2, records with checksums.
    /// A store of format 1 (records without them) is read as it is and marked 2 by its first
    /// write, since records of format 2 then join it; a store of any other format is refused.
    static let formatVersion: UInt32 = 2
    /// The store formats this version reads.
    static let readableFormats: ClosedRange<UInt32> = 1...2

    /// meta: ASCII key -> value. Holds `format` (u32 big-endian).
    static let meta = "meta"
    /// events: u64 big-endian position -> record (see ``RecordCodec``).
    static let events = "events"
    /// streams: stream name (UTF-8) -> u64 BE stream number, u64 BE last version, then the
    /// positions (u64 BE each) of the newest events not yet in a full chunk of the index.
    static let streams = "streams"
    /// stream_index: u64 BE stream number, u64 BE first version of a chunk -> the positions
    /// (u64 BE each) of the chunk's ``indexChunk`` versions. Only full chunks are here.
    static let streamIndex = "stream_index"
    /// How many versions one stream-index chunk holds. A batch of appends to many streams then
    /// touches the index only for the streams whose chunk fills up, and the `streams` entries it
    /// rewrites anyway carry the rest.
    static let indexChunk = 16
    /// event_ids: 16-byte event id -> u64 BE position.
    static let eventIDs = "event_ids"

    static let formatKey = "format"
}

/// Big-endian integer helpers for keys and values: byte order that sorts like the numbers.
enum BigEndian {
    @inline(__always)
    static func store(_ value: UInt64, into pointer: UnsafeMutableRawPointer, at offset: Int = 0) {
        pointer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt64.self)
    }

    @inline(__always)
    static func store(_ value: UInt32, into pointer: UnsafeMutableRawPointer, at offset: Int = 0) {
        pointer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
    }

    @inline(__always)
    static func store(_ value: UInt16, into pointer: UnsafeMutableRawPointer, at offset: Int = 0) {
        pointer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt16.self)
    }

    /// The 8 big-endian bytes of `value`, as a table value.
    static func bytes(of value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    @inline(__always)
    static func uint64(_ buffer: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt64 {
        UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    static func uint32(_ buffer: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt32 {
        UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    static func uint16(_ buffer: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt16 {
        UInt16(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    /// Runs `body` with the 8 big-endian bytes of `value`.
    @inline(__always)
    static func withBytes<R>(of value: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: value.bigEndian, body)
    }

    /// Runs `body` with the 16 bytes of a stream-index key: stream number, then the first version
    /// of a chunk.
    @inline(__always)
    static func withIndexKey<R>(
        stream number: UInt64, version: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        try withUnsafeBytes(of: (number.bigEndian, version.bigEndian), body)
    }
}

/// A stream's entry in the `streams` database.
struct StreamHead: Equatable {
    /// The stream's number, given in order of creation from 1; the stream index is keyed by it.
    var number: UInt64
    /// The version of the stream's last event.
    var version: UInt64
    /// The positions of versions after the last full chunk (`version % indexChunk` of them).
    var pending: [UInt64]

    init(number: UInt64, version: UInt64, pending: [UInt64] = []) {
        self.number = number
        self.version = version
        self.pending = pending
    }

    /// The first version whose position is in `pending` (versions before it are in full chunks).
    var firstPendingVersion: UInt64 { version - UInt64(pending.count) + 1 }

    /// The first version of the chunk that holds `version`.
    static func chunkStart(of version: UInt64) -> UInt64 {
        (version - 1) / UInt64(Schema.indexChunk) * UInt64(Schema.indexChunk) + 1
    }

    /// Decodes a `streams` value; nil when its size does not match its version.
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 16, (bytes.count - 16) % 8 == 0 else { return nil }
        number = BigEndian.uint64(bytes, at: 0)
        version = BigEndian.uint64(bytes, at: 8)
        let count = (bytes.count - 16) / 8
        guard UInt64(count) == version % UInt64(Schema.indexChunk) else { return nil }
        pending = (0..<count).map { BigEndian.uint64(bytes, at: 16 + 8 * $0) }
    }

    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: 16 + 8 * pending.count, alignment: 8) { buffer in
            guard let base = buffer.baseAddress else { return try body(UnsafeRawBufferPointer(buffer)) }
            BigEndian.store(number, into: base, at: 0)
            BigEndian.store(version, into: base, at: 8)
            for (index, position) in pending.enumerated() { BigEndian.store(position, into: base, at: 16 + 8 * index) }
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }
}
