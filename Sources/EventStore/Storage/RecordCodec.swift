import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The byte layout of one record in the `events` database (format 1), all integers big-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | record format, 1 |
/// | 1 | 1 | flags, 0 |
/// | 2 | 2 | stream name length S |
/// | 4 | 2 | type length T |
/// | 6 | 2 | reserved, 0 |
/// | 8 | 8 | stream version |
/// | 16 | 8 | recorded at, microseconds since 1970-01-01T00:00:00Z (signed) |
/// | 24 | 16 | event id (UUID bytes in RFC 4122 order) |
/// | 40 | 4 | data length D |
/// | 44 | 4 | metadata length M |
/// | 48 | S | stream name, UTF-8 |
/// | 48+S | T | type, UTF-8 |
/// | 48+S+T | D | data |
/// | 48+S+T+D | M | metadata |
///
/// The position is the record's key, not part of the value.
enum RecordCodec {
    static let recordFormat: UInt8 = 1
    static let headerSize = 48

    /// The size of a record with fields of these lengths.
    @inline(__always)
    static func encodedSize(streamBytes: Int, typeBytes: Int, dataBytes: Int, metadataBytes: Int) -> Int {
        headerSize + streamBytes + typeBytes + dataBytes + metadataBytes
    }

    /// Writes a record into `buffer`, which must be exactly ``encodedSize`` bytes.
    static func encode(
        into buffer: UnsafeMutableRawBufferPointer, stream: UnsafeRawBufferPointer,
        type: UnsafeRawBufferPointer, version: UInt64, recordedAt: Int64, id: UUID, data: Data, metadata: Data
    ) {
        guard let base = buffer.baseAddress else { return }
        base.storeBytes(of: recordFormat, as: UInt8.self)
        base.storeBytes(of: 0, toByteOffset: 1, as: UInt8.self)
        BigEndian.store(UInt16(stream.count), into: base, at: 2)
        BigEndian.store(UInt16(type.count), into: base, at: 4)
        BigEndian.store(UInt16(0), into: base, at: 6)
        BigEndian.store(version, into: base, at: 8)
        BigEndian.store(UInt64(bitPattern: recordedAt), into: base, at: 16)
        withUnsafeBytes(of: id.uuid) { copy($0, to: base, at: 24) }
        BigEndian.store(UInt32(data.count), into: base, at: 40)
        BigEndian.store(UInt32(metadata.count), into: base, at: 44)
        var offset = headerSize
        for part in [stream, type] {
            copy(part, to: base, at: offset)
            offset += part.count
        }
        data.withUnsafeBytes { copy($0, to: base, at: offset) }
        offset += data.count
        metadata.withUnsafeBytes { copy($0, to: base, at: offset) }
    }

    @inline(__always)
    private static func copy(_ source: UnsafeRawBufferPointer, to base: UnsafeMutableRawPointer, at offset: Int) {
        UnsafeMutableRawBufferPointer(start: base + offset, count: source.count).copyMemory(from: source)
    }
}

/// A checked, non-copying view of one stored record. Valid only while the LMDB transaction that
/// produced `bytes` is open.
struct RecordView {
    let bytes: UnsafeRawBufferPointer
    let streamLength: Int
    let typeLength: Int
    let dataLength: Int
    let metadataLength: Int

    /// Checks the header against the record's size; throws ``EventStoreError/Code/damaged`` when
    /// the record is not a format-1 record whose lengths add up.
    init(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(EventStoreError) {
        guard bytes.count >= RecordCodec.headerSize, bytes[0] == RecordCodec.recordFormat else {
            throw EventStoreError(
                .damaged, "The record at position \(position) is not a readable record; run `esctl verify` and restore from a backup.")
        }
        streamLength = Int(BigEndian.uint16(bytes, at: 2))
        typeLength = Int(BigEndian.uint16(bytes, at: 4))
        dataLength = Int(BigEndian.uint32(bytes, at: 40))
        metadataLength = Int(BigEndian.uint32(bytes, at: 44))
        let expected = RecordCodec.encodedSize(
            streamBytes: streamLength, typeBytes: typeLength, dataBytes: dataLength, metadataBytes: metadataLength)
        guard expected == bytes.count, streamLength > 0, typeLength > 0 else {
            throw EventStoreError(
                .damaged,
                "The record at position \(position) has lengths that do not match its size; run `esctl verify` and restore from a backup.")
        }
        self.bytes = bytes
    }

    var version: UInt64 { BigEndian.uint64(bytes, at: 8) }
    var recordedAt: Int64 { Int64(bitPattern: BigEndian.uint64(bytes, at: 16)) }
    var idBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[24..<40]) }
    var id: UUID {
        UUID(uuid: (
            bytes[24], bytes[25], bytes[26], bytes[27], bytes[28], bytes[29], bytes[30], bytes[31],
            bytes[32], bytes[33], bytes[34], bytes[35], bytes[36], bytes[37], bytes[38], bytes[39]
        ))
    }
    var streamBytes: UnsafeRawBufferPointer { slice(RecordCodec.headerSize, streamLength) }
    var typeBytes: UnsafeRawBufferPointer { slice(RecordCodec.headerSize + streamLength, typeLength) }
    var dataBytes: UnsafeRawBufferPointer {
        slice(RecordCodec.headerSize + streamLength + typeLength, dataLength)
    }
    var metadataBytes: UnsafeRawBufferPointer {
        slice(RecordCodec.headerSize + streamLength + typeLength + dataLength, metadataLength)
    }

    @inline(__always)
    private func slice(_ start: Int, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])
    }

    /// Copies the record out into a value that outlives the transaction.
    func recordedEvent(at position: UInt64) throws(EventStoreError) -> RecordedEvent {
        guard UTF8Check.isValid(streamBytes), UTF8Check.isValid(typeBytes) else { throw notUTF8(position) }
        return RecordedEvent(
            position: position, stream: String(decoding: streamBytes, as: UTF8.self), version: version, id: id,
            type: String(decoding: typeBytes, as: UTF8.self), data: Self.copy(dataBytes), metadata: Self.copy(metadataBytes),
            recordedAtMicroseconds: recordedAt)
    }

    /// Checks that this record, found through the stream index of `stream`, is one of that
    /// stream's and has a readable type; damaged when not.
    func checkBelongs(to stream: String, at position: UInt64) throws(EventStoreError) {
        var name = stream
        let same = name.withUTF8 { expected in
            guard expected.count == streamBytes.count else { return false }
            guard let left = expected.baseAddress, let right = streamBytes.baseAddress else { return true }
            return memcmp(left, right, expected.count) == 0
        }
        guard same else {
            throw EventStoreError(
                .damaged, "The stream index of '\(stream)' points to position \(position), a record of another stream; run `esctl verify`.")
        }
        guard UTF8Check.isValid(typeBytes) else { throw notUTF8(position) }
    }

    /// The bytes as Data, with one plain copy.
    @inline(__always)
    static func copy(_ bytes: UnsafeRawBufferPointer) -> Data {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return Data() }
        return Data(bytes: base, count: bytes.count)
    }

    /// Copies the record out, sharing the stream and type strings of earlier records through
    /// `interner` (for reads of many records).
    func recordedEvent(at position: UInt64, interner: inout StringInterner) throws(EventStoreError) -> RecordedEvent {
        guard UTF8Check.isValid(streamBytes), UTF8Check.isValid(typeBytes) else { throw notUTF8(position) }
        return RecordedEvent(
            position: position, stream: interner.string(streamBytes), version: version, id: id, type: interner.string(typeBytes),
            data: Self.copy(dataBytes), metadata: Self.copy(metadataBytes), recordedAtMicroseconds: recordedAt)
    }

    private func notUTF8(_ position: UInt64) -> EventStoreError {
        EventStoreError(
            .damaged, "The record at position \(position) has a name that is not UTF-8; run `esctl verify` and restore from a backup.")
    }

    /// Whether the stream name starts with the given UTF-8 bytes.
    func streamHasPrefix(_ prefix: [UInt8]) -> Bool {
        prefix.count <= streamLength && streamBytes.starts(with: prefix)
    }

    /// Whether this record's stream, type, data and metadata equal a new event's (for idempotency).
    func hasSameContent(stream: String, event: NewEvent) -> Bool {
        streamBytes.elementsEqual(stream.utf8) && typeBytes.elementsEqual(event.type.utf8)
            && event.data.withUnsafeBytes { dataBytes.elementsEqual($0) }
            && event.metadata.withUnsafeBytes { metadataBytes.elementsEqual($0) }
    }
}
