import CRC32C
import Foundation

/// The byte layout of one record in the `events` database, all integers big-endian
/// (`docs/FORMAT.md`, "A record"):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | record format: 2 (1 for records written before checksums) |
/// | 1 | 1 | flags: bit 0 (1) = a tags section follows the metadata; bit 1 (2) = the data is binary (``DataFormat/binary``); other bits 0 |
/// | 2 | 2 | stream name length S |
/// | 4 | 2 | type length T |
/// | 6 | 2 | schema version; 0 stands for 1 (and is what version 1 is written as) |
/// | 8 | 8 | stream version |
/// | 16 | 8 | recorded at, microseconds since 1970-01-01T00:00:00Z (signed) |
/// | 24 | 16 | event id (UUID bytes in RFC 4122 order) |
/// | 40 | 4 | data length D |
/// | 44 | 4 | metadata length M |
/// | 48 | S | stream name, UTF-8 |
/// | 48+S | T | type, UTF-8 |
/// | 48+S+T | D | data |
/// | 48+S+T+D | M | metadata |
/// | 48+S+T+D+M | G | flag bit 0 only: the tags, a count (u8, 1–32) then each as a length (u8, 1–200) and UTF-8 bytes |
/// | 48+S+T+D+M+G | 4 | format 2 only: CRC-32C of the position (8 bytes) and every byte above |
///
/// The position is the record's key, not part of the value; the checksum covers it, so a
/// record read under another key (a damaged key) is caught too.
@_spi(Records) public enum RecordCodec {
    /// The format new records are written in.
    @inlinable public static var recordFormat: UInt8 { 2 }
    /// The format of records written before checksums (read, never written).
    @inlinable public static var uncheckedFormat: UInt8 { 1 }
    @inlinable public static var headerSize: Int { 48 }
    @inlinable public static var checksumSize: Int { 4 }
    /// The flag that says a tags section follows the metadata.
    @inlinable public static var tagsFlag: UInt8 { 1 }
    /// The flag that says the data is binary (``DataFormat/binary``): kept as given, never parsed.
    @inlinable public static var binaryDataFlag: UInt8 { 2 }

    /// The flags byte of a record with these tags and data format.
    @inline(__always)
    @inlinable
    public static func flags(tags: [String], dataFormat: DataFormat) -> UInt8 {
        (tags.isEmpty ? 0 : tagsFlag) | (dataFormat == .binary ? binaryDataFlag : 0)
    }

    /// The size of a record (of the current format) with fields of these lengths.
    @inline(__always)
    @inlinable
    public static func encodedSize(streamBytes: Int, typeBytes: Int, dataBytes: Int, metadataBytes: Int, tags: [String] = []) -> Int {
        headerSize + streamBytes + typeBytes + dataBytes + metadataBytes + tagsSize(tags) + checksumSize
    }

    /// The size of the tags section: none without tags, else a count and each tag with its length.
    @inline(__always)
    @inlinable
    public static func tagsSize(_ tags: [String]) -> Int {
        tags.isEmpty ? 0 : tags.reduce(1) { $0 + 1 + $1.utf8.count }
    }

    /// The length of the tags section that starts `bytes` (which must be at least that long),
    /// or nil when it does not hold a well-formed one.
    @inlinable
    public static func tagsSectionLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let count = bytes.first, count > 0 else { return nil }
        var offset = 1
        for _ in 0..<count {
            guard offset < bytes.count else { return nil }
            let length = Int(bytes[offset])
            guard length > 0 else { return nil }
            offset += 1 + length
        }
        return offset <= bytes.count ? offset : nil
    }

    /// The tags of a well-formed tags section (see ``tagsSectionLength(_:)``).
    @inlinable
    public static func decodeTags(_ bytes: UnsafeRawBufferPointer) -> [String] {
        guard let count = bytes.first, count > 0 else { return [] }
        var tags: [String] = []
        tags.reserveCapacity(Int(count))
        var offset = 1
        for _ in 0..<count {
            let length = Int(bytes[offset])
            tags.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(offset + 1)..<(offset + 1 + length)]), as: UTF8.self))
            offset += 1 + length
        }
        return tags
    }

    /// Writes the record kept at `position` into `buffer`, which must be exactly ``encodedSize``
    /// bytes, checksum included.
    @inlinable
    public static func encode(
        into buffer: UnsafeMutableRawBufferPointer, position: UInt64, stream: UnsafeRawBufferPointer,
        type: UnsafeRawBufferPointer, version: UInt64, recordedAt: Int64, id: UUID, data: Data, metadata: Data,
        schemaVersion: UInt16, tags: [String] = [], dataFormat: DataFormat = .json
    ) {
        guard let base = buffer.baseAddress else { return }
        base.storeBytes(of: recordFormat, as: UInt8.self)
        base.storeBytes(of: flags(tags: tags, dataFormat: dataFormat), toByteOffset: 1, as: UInt8.self)
        BigEndian.store(UInt16(stream.count), into: base, at: 2)
        BigEndian.store(UInt16(type.count), into: base, at: 4)
        BigEndian.store(storedSchemaVersion(schemaVersion), into: base, at: 6)
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
        offset += metadata.count
        if !tags.isEmpty {
            // Tags are checked before (at most 32 of at most 200 bytes each), so each fits its u8.
            base.storeBytes(of: UInt8(truncatingIfNeeded: tags.count), toByteOffset: offset, as: UInt8.self)
            offset += 1
            for tag in tags {
                let utf8 = Array(tag.utf8)
                base.storeBytes(of: UInt8(truncatingIfNeeded: utf8.count), toByteOffset: offset, as: UInt8.self)
                utf8.withUnsafeBytes { copy($0, to: base, at: offset + 1) }
                offset += 1 + utf8.count
            }
        }
        let checksum = Self.checksum(position: position, UnsafeRawBufferPointer(rebasing: buffer[0..<offset]))
        BigEndian.store(checksum, into: base, at: offset)
    }

    /// Schema version 1 is written as 0, the bytes every record held there before schema versions
    /// existed: the records (and PostgreSQL's checksums) of version-1 events stay as they were.
    @inline(__always)
    @inlinable
    public static func storedSchemaVersion(_ version: UInt16) -> UInt16 { version == 1 ? 0 : version }

    /// The schema version the 2 bytes at offset 6 stand for: 0 is 1.
    @inline(__always)
    @inlinable
    public static func schemaVersion(stored: UInt16) -> UInt16 { stored == 0 ? 1 : stored }

    /// The CRC-32C of a record's position (8 bytes, big-endian) followed by `body`, the record's
    /// bytes before its checksum.
    @inline(__always)
    @inlinable
    public static func checksum(position: UInt64, _ body: UnsafeRawBufferPointer) -> UInt32 {
        es_crc32c_record(position, body.baseAddress, body.count)
    }

    @inline(__always)
    @inlinable
    static func copy(_ source: UnsafeRawBufferPointer, to base: UnsafeMutableRawPointer, at offset: Int) {
        guard source.count > 0 else { return }
        UnsafeMutableRawBufferPointer(start: base + offset, count: source.count).copyMemory(from: source)
    }
}

/// The checksum a backend that assigns positions and versions itself (PostgreSQL) keeps with an
/// event: the CRC-32C of the event's LMDB record with position 0 and version 0
/// (docs/FORMAT.md, "On PostgreSQL"), so that the client computes it before the server numbers
/// the event, and `verify` recomputes it from the stored fields.
package enum ContentChecksum {
    /// The checksum of an event's content, as a signed 32-bit value (PostgreSQL's `integer`).
    @inlinable
    package static func of(
        stream: String, type: String, recordedAt: Int64, id: UUID, data: Data, metadata: Data, schemaVersion: UInt16,
        tags: [String] = [], dataFormat: DataFormat = .json
    ) -> Int32 {
        var stream = stream
        var type = type
        return stream.withUTF8 { streamBytes in
            type.withUTF8 { typeBytes in
                let size = RecordCodec.encodedSize(
                    streamBytes: streamBytes.count, typeBytes: typeBytes.count, dataBytes: data.count,
                    metadataBytes: metadata.count, tags: tags)
                return withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer in
                    RecordCodec.encode(
                        into: buffer, position: 0, stream: UnsafeRawBufferPointer(streamBytes),
                        type: UnsafeRawBufferPointer(typeBytes), version: 0, recordedAt: recordedAt, id: id, data: data,
                        metadata: metadata, schemaVersion: schemaVersion, tags: tags, dataFormat: dataFormat)
                    return Int32(bitPattern: BigEndian.uint32(UnsafeRawBufferPointer(rebasing: buffer[(size - 4)...])))
                }
            }
        }
    }
}
