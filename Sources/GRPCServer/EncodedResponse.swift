import EventStoreCore
import Foundation
import GRPCCore

/// A Read or Subscribe response written straight from recorded events in protobuf's wire
/// format: the bytes SwiftProtobuf writes for the `Umadb_V1_ReadResponse` (or
/// `Umadb_V1_SubscribeResponse`) of the same events, fields in number order and proto3's
/// defaults left out, without building those messages first.
///
/// Why: building a `Umadb_V1_SequencedEvent` per event, sizing it and letting SwiftProtobuf
/// visit it took about half of a read's time on the server (BENCHMARKS.md, S15). Both
/// responses start with the same field (`events`, number 1), so one writer serves both; only a
/// Read response carries `head` (field 2), written last.
struct EncodedResponse: Sendable {
    private(set) var bytes: [UInt8] = []
    /// The events written so far.
    private(set) var eventCount = 0
    /// The sum of ``estimatedSize(of:)`` over the events written: what a caller bounds a
    /// message by, known before an event is encoded.
    private(set) var estimatedBytes = 0

    var isEmpty: Bool { eventCount == 0 }

    /// Writes `event` as the next element of `events`.
    mutating func append(_ event: RecordedEvent) {
        let back = DCBEvents.ReadBack(event)
        let eventSize = Self.eventSize(event, back)
        var sequencedSize = Self.fieldSize(bytes: eventSize)
        if event.position > 0 { sequencedSize += 1 + Self.varintSize(event.position) }
        let trackingSize = back.tracking.map(Self.trackingSize)
        if let trackingSize { sequencedSize += Self.fieldSize(bytes: trackingSize) }

        header(field: 1, length: sequencedSize)
        if event.position > 0 {
            bytes.append(0x08)
            varint(event.position)
        }
        header(field: 2, length: eventSize)
        string(field: 1, event.type)
        for tag in event.tags { string(field: 2, tag, always: true) }
        if !event.data.isEmpty {
            header(field: 3, length: event.data.count)
            event.data.withUnsafeBytes { bytes.append(contentsOf: $0) }
        }
        string(field: 4, back.uuid)
        for entry in back.entries {
            header(field: 5, length: Self.entrySize(entry))
            string(field: 1, entry.key)
            string(field: 2, entry.value)
        }
        if let tracking = back.tracking, let trackingSize {
            header(field: 3, length: trackingSize)
            string(field: 1, tracking.source)
            if tracking.position > 0 {
                bytes.append(0x10)
                varint(tracking.position)
            }
        }
        eventCount += 1
        estimatedBytes += Self.estimatedSize(of: event)
    }

    /// Writes a Read response's `head` (field 2, optional: written whenever given). Call it
    /// once, after the events.
    mutating func appendHead(_ head: UInt64) {
        bytes.append(0x10)
        varint(head)
    }

    /// About the bytes `event` takes in a message, at least as many as it does, from its sizes
    /// alone: the data dominates; the metadata's members take no more as protobuf entries than
    /// as JSON; the rest of an event is bounded by the store's limits.
    static func estimatedSize(of event: RecordedEvent) -> Int {
        event.data.count &+ event.metadata.count &+ event.type.utf8.count &+ 96
            &+ event.tags.reduce(0) { $0 &+ $1.utf8.count &+ 6 }
    }

    // MARK: Sizes

    private static func eventSize(_ event: RecordedEvent, _ back: DCBEvents.ReadBack) -> Int {
        var size = stringSize(event.type) + stringSize(back.uuid)
        for tag in event.tags { size += fieldSize(bytes: tag.utf8.count) }
        if !event.data.isEmpty { size += fieldSize(bytes: event.data.count) }
        for entry in back.entries { size += fieldSize(bytes: entrySize(entry)) }
        return size
    }

    private static func entrySize(_ entry: Umadb_V1_MetadataEntry) -> Int {
        stringSize(entry.key) + stringSize(entry.value)
    }

    private static func trackingSize(_ tracking: Umadb_V1_TrackingInfo) -> Int {
        stringSize(tracking.source) + (tracking.position > 0 ? 1 + varintSize(tracking.position) : 0)
    }

    /// A string field's size, 0 when empty (proto3 leaves it out).
    private static func stringSize(_ value: String) -> Int {
        let count = value.utf8.count
        return count == 0 ? 0 : fieldSize(bytes: count)
    }

    /// A length-delimited field's size: its tag (one byte for fields 1 to 15), its length, its bytes.
    private static func fieldSize(bytes count: Int) -> Int {
        1 + varintSize(UInt64(count)) + count
    }

    private static func varintSize(_ value: UInt64) -> Int {
        (64 - (value | 1).leadingZeroBitCount + 6) / 7
    }

    // MARK: Writing

    /// A length-delimited field's tag and length (wire type 2).
    private mutating func header(field: UInt8, length: Int) {
        bytes.append(field << 3 | 2)
        varint(UInt64(length))
    }

    /// A string field; left out when empty unless `always` (an element of a repeated field).
    private mutating func string(field: UInt8, _ value: String, always: Bool = false) {
        var value = value
        let count = value.utf8.count
        guard count > 0 || always else { return }
        header(field: field, length: count)
        value.withUTF8 { bytes.append(contentsOf: $0) }
    }

    private mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}

/// Hands an ``EncodedResponse``'s bytes to the transport as they are.
struct EncodedResponseSerializer: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: EncodedResponse) throws -> Bytes {
        Bytes(message.bytes)
    }
}
