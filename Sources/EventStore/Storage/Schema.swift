/// The named LMDB databases of a store, and the byte layout of their keys and values.
/// `docs/FORMAT.md` documents the same layout for readers in other languages; keep both in step.
enum Schema {
    /// The version written under the meta key `format`; a store with another version is refused.
    static let formatVersion: UInt32 = 1

    /// meta: ASCII key -> value. Holds `format` (u32 big-endian).
    static let meta = "meta"
    /// events: u64 big-endian position -> record (see ``RecordCodec``).
    static let events = "events"
    /// streams: stream name (UTF-8) -> u64 BE stream number, u64 BE last version.
    static let streams = "streams"
    /// stream_index: u64 BE stream number, u64 BE version -> u64 BE position.
    static let streamIndex = "stream_index"
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

    /// Runs `body` with the 16 bytes of a stream-index key: stream number, then version.
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

    static let encodedSize = 16

    init(number: UInt64, version: UInt64) {
        self.number = number
        self.version = version
    }

    /// Decodes a `streams` value; nil when it is not 16 bytes.
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.encodedSize else { return nil }
        number = BigEndian.uint64(bytes, at: 0)
        version = BigEndian.uint64(bytes, at: 8)
    }

    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: (number.bigEndian, version.bigEndian), body)
    }
}
