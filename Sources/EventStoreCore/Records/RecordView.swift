import Foundation
@_spi(Records) import EventStoreJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A checked, non-copying view of one stored record. Valid only while the LMDB transaction that
/// produced `bytes` is open.
@_spi(Records) public struct RecordView {
    public let bytes: UnsafeRawBufferPointer
    public let streamLength: Int
    public let typeLength: Int
    public let dataLength: Int
    public let metadataLength: Int
    /// The length of the tags section (0 without tags).
    public let tagsLength: Int

    /// Checks the record kept at `position`: a known format whose lengths add up to its size
    /// and, for records with a checksum, a checksum that matches. Throws
    /// ``EventStoreError/Code/damaged`` naming the position otherwise.
    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(EventStoreError) {
        guard bytes.count >= RecordCodec.headerSize,
            bytes[0] == RecordCodec.recordFormat || bytes[0] == RecordCodec.uncheckedFormat
        else {
            throw EventStoreError(
                .damaged, "The record at position \(position) is not a readable record; run `esctl verify` and restore from a backup.")
        }
        let isChecked = bytes[0] == RecordCodec.recordFormat
        streamLength = Int(BigEndian.uint16(bytes, at: 2))
        typeLength = Int(BigEndian.uint16(bytes, at: 4))
        dataLength = Int(BigEndian.uint32(bytes, at: 40))
        metadataLength = Int(BigEndian.uint32(bytes, at: 44))
        let fields = RecordCodec.headerSize + streamLength + typeLength + dataLength + metadataLength
        var tagsLength = 0
        if bytes[1] & RecordCodec.tagsFlag != 0, fields < bytes.count {
            tagsLength = RecordCodec.tagsSectionLength(UnsafeRawBufferPointer(rebasing: bytes[fields...])) ?? bytes.count
        }
        self.tagsLength = tagsLength
        let body = fields + tagsLength
        let expected = body + (isChecked ? RecordCodec.checksumSize : 0)
        guard expected == bytes.count, streamLength > 0, typeLength > 0 else {
            throw EventStoreError(
                .damaged,
                "The record at position \(position) has lengths that do not match its size; run `esctl verify` and restore from a backup.")
        }
        if isChecked {
            let stored = BigEndian.uint32(bytes, at: body)
            guard RecordCodec.checksum(position: position, UnsafeRawBufferPointer(rebasing: bytes[0..<body])) == stored else {
                throw EventStoreError(
                    .damaged,
                    "The record at position \(position) does not match its checksum; run `esctl verify --deep` and restore from a backup.")
            }
        }
        self.bytes = bytes
    }

    /// Whether the record carries a checksum (format 2); records written before checksums do not.
    @inlinable
    public var isChecked: Bool { bytes[0] == RecordCodec.recordFormat }
    @inlinable
    public var version: UInt64 { BigEndian.uint64(bytes, at: 8) }
    @inlinable
    public var recordedAt: Int64 { Int64(bitPattern: BigEndian.uint64(bytes, at: 16)) }
    @inlinable
    public var schemaVersion: UInt16 { RecordCodec.schemaVersion(stored: BigEndian.uint16(bytes, at: 6)) }
    @inlinable
    public var id: UUID {
        UUID(uuid: (
            bytes[24], bytes[25], bytes[26], bytes[27], bytes[28], bytes[29], bytes[30], bytes[31],
            bytes[32], bytes[33], bytes[34], bytes[35], bytes[36], bytes[37], bytes[38], bytes[39]
        ))
    }
    @inlinable
    public var streamBytes: UnsafeRawBufferPointer { slice(RecordCodec.headerSize, streamLength) }
    @inlinable
    public var typeBytes: UnsafeRawBufferPointer { slice(RecordCodec.headerSize + streamLength, typeLength) }
    @inlinable
    public var dataBytes: UnsafeRawBufferPointer {
        slice(RecordCodec.headerSize + streamLength + typeLength, dataLength)
    }
    @inlinable
    public var metadataBytes: UnsafeRawBufferPointer {
        slice(RecordCodec.headerSize + streamLength + typeLength + dataLength, metadataLength)
    }

    @inlinable
    public var tagsBytes: UnsafeRawBufferPointer {
        slice(RecordCodec.headerSize + streamLength + typeLength + dataLength + metadataLength, tagsLength)
    }
    /// What the record's data is (its flag bit 1).
    @inlinable
    public var dataFormat: DataFormat { bytes[1] & RecordCodec.binaryDataFlag != 0 ? .binary : .json }

    /// The record's tags (empty when none).
    @inlinable
    public var tags: [String] { tagsLength == 0 ? [] : RecordCodec.decodeTags(tagsBytes) }

    /// Hands each tag's UTF-8 bytes, in place and in order, to `body`.
    @inlinable
    public func forEachTag(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard tagsLength > 0 else { return }
        let section = tagsBytes
        var offset = 1
        for _ in 0..<Int(section[0]) {
            let length = Int(section[offset])
            try body(UnsafeRawBufferPointer(rebasing: section[(offset + 1)..<(offset + 1 + length)]))
            offset += 1 + length
        }
    }

    /// Whether the record carries `tag` (compared byte by byte, without decoding the others).
    @inlinable
    public func hasTag(_ tag: UnsafeRawBufferPointer) -> Bool {
        guard tagsLength > 0 else { return false }
        let section = tagsBytes
        var offset = 1
        for _ in 0..<Int(section[0]) {
            let length = Int(section[offset])
            if length == tag.count, UnsafeRawBufferPointer(rebasing: section[(offset + 1)..<(offset + 1 + length)]).elementsEqual(tag) {
                return true
            }
            offset += 1 + length
        }
        return false
    }

    @inline(__always)
    @inlinable
    func slice(_ start: Int, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])
    }

    /// Copies the record out into a value that outlives the transaction.
    @inlinable
    public func recordedEvent(at position: UInt64) throws(EventStoreError) -> RecordedEvent {
        guard UTF8Check.isValid(streamBytes), UTF8Check.isValid(typeBytes) else { throw notUTF8(position) }
        return RecordedEvent(
            position: position, stream: String(decoding: streamBytes, as: UTF8.self), version: version, id: id,
            type: String(decoding: typeBytes, as: UTF8.self), data: Self.copy(dataBytes), metadata: Self.copy(metadataBytes),
            recordedAtMicroseconds: recordedAt, schemaVersion: schemaVersion, tags: tags, dataFormat: dataFormat)
    }

    /// Checks that this record, found through the stream index of `stream`, is one of that
    /// stream's and has a readable type; damaged when not.
    @inlinable
    public func checkBelongs(to stream: String, at position: UInt64) throws(EventStoreError) {
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
    @inlinable
    public static func copy(_ bytes: UnsafeRawBufferPointer) -> Data {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return Data() }
        return Data(bytes: base, count: bytes.count)
    }

    /// Copies the record out, sharing the stream and type strings of earlier records through
    /// `interner` (for reads of many records).
    @inlinable
    public func recordedEvent(at position: UInt64, interner: inout StringInterner) throws(EventStoreError) -> RecordedEvent {
        guard UTF8Check.isValid(streamBytes), UTF8Check.isValid(typeBytes) else { throw notUTF8(position) }
        return RecordedEvent(
            position: position, stream: interner.string(streamBytes), version: version, id: id, type: interner.string(typeBytes),
            data: Self.copy(dataBytes), metadata: Self.copy(metadataBytes), recordedAtMicroseconds: recordedAt,
            schemaVersion: schemaVersion, tags: tags, dataFormat: dataFormat)
    }

    @inlinable
    func notUTF8(_ position: UInt64) -> EventStoreError {
        EventStoreError(
            .damaged, "The record at position \(position) has a name that is not UTF-8; run `esctl verify` and restore from a backup.")
    }

    /// Whether the stream name starts with the given UTF-8 bytes.
    @inlinable
    public func streamHasPrefix(_ prefix: [UInt8]) -> Bool {
        prefix.count <= streamLength && streamBytes.starts(with: prefix)
    }

    /// Whether this record's stream, type, data and metadata equal a new event's (for
    /// idempotency). The new event's data and metadata are in their stored form already
    /// (``StoredForm``); a record written before JSON was stored compactly is compared in that
    /// form too, so the same JSON is the same content however it was spaced.
    public func hasSameContent(stream: String, event: NewEvent) -> Bool {
        guard streamBytes.elementsEqual(stream.utf8), typeBytes.elementsEqual(event.type.utf8), schemaVersion == event.schemaVersion,
            tags.map({ Array($0.utf8) }) == event.tags.map({ Array($0.utf8) }), dataFormat == event.dataFormat
        else { return false }
        let sameData = dataFormat == .binary ? event.data.withUnsafeBytes { dataBytes.elementsEqual($0) } : Self.sameStoredForm(dataBytes, event.data)
        return sameData && Self.sameStoredForm(metadataBytes, event.metadata)
    }

    static func sameStoredForm(_ stored: UnsafeRawBufferPointer, _ given: Data) -> Bool {
        if given.withUnsafeBytes({ stored.elementsEqual($0) }) { return true }
        return StoredForm.of(copy(stored)) == given
    }
}
