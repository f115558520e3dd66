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

    /// Writes `event` as the next element of `events`, from its bytes in place;
    /// `estimatedSize` is its ``estimatedSize(of:)``.
    mutating func append(_ event: EventView, estimatedSize: Int) {
        let back = DCBEvents.ReadBack(event)
        let type = event.typeUTF8
        let data = event.data
        var eventSize = Self.stringSize(type.count) + Self.stringSize(back.uuid.utf8.count)
        event.forEachTag { eventSize += Self.fieldSize(bytes: $0.count) }
        if !data.isEmpty { eventSize += Self.fieldSize(bytes: data.count) }
        for entry in back.entries { eventSize += Self.fieldSize(bytes: Self.entrySize(entry)) }
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
        if !type.isEmpty { field(1, type) }
        event.forEachTag { field(2, $0) }
        if !data.isEmpty { field(3, data) }
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
        estimatedBytes &+= estimatedSize
    }

    /// Writes a Read response's `head` (field 2, optional: written whenever given). Call it
    /// once, after the events.
    mutating func appendHead(_ head: UInt64) {
        bytes.append(0x10)
        varint(head)
    }

    /// About the bytes `event` takes in a message, at least as many as it does, from its sizes
    /// alone: the data dominates; the rest of an event is bounded by the store's limits.
    static func estimatedSize(of event: EventView) -> Int {
        // A tag takes its bytes and one more as stored, at most its bytes and three in a message.
        // A metadata member takes at most 4/3 of its JSON as an entry (`"k1":1,`, 7 bytes, is
        // 9); unescaping only shortens strings.
        event.data.count &+ 2 &* event.metadata.count &+ event.typeUTF8.count &+ 96 &+ 3 &* event.tagsByteCount
    }

    // MARK: Sizes

    private static func entrySize(_ entry: Umadb_V1_MetadataEntry) -> Int {
        stringSize(entry.key.utf8.count) + stringSize(entry.value.utf8.count)
    }

    private static func trackingSize(_ tracking: Umadb_V1_TrackingInfo) -> Int {
        stringSize(tracking.source.utf8.count) + (tracking.position > 0 ? 1 + varintSize(tracking.position) : 0)
    }

    /// A string field's size, 0 when empty (proto3 leaves it out).
    private static func stringSize(_ count: Int) -> Int {
        count == 0 ? 0 : fieldSize(bytes: count)
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

    /// A string field; left out when empty (proto3's default).
    private mutating func string(field number: UInt8, _ value: String) {
        var value = value
        guard !value.isEmpty else { return }
        value.withUTF8 { field(number, UnsafeRawBufferPointer($0)) }
    }

    /// A length-delimited field of `value`'s bytes, written even when empty (an element of a
    /// repeated field).
    private mutating func field(_ number: UInt8, _ value: UnsafeRawBufferPointer) {
        header(field: number, length: value.count)
        bytes.append(contentsOf: value)
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

/// Events encoded into messages of about a byte budget each (an event bigger than the budget
/// goes alone): what a read or a subscription gathers in a read transaction and then sends.
struct EncodedResponses {
    let budgetBytes: Int
    /// The message being filled.
    private(set) var current = EncodedResponse()
    /// The messages full already, in order.
    private(set) var full: [EncodedResponse] = []
    /// The events appended since these messages began, and the sum of their estimated sizes
    /// (what a ``BatchSizer`` observes).
    private(set) var appendedCount = 0
    private(set) var appendedBytes = 0

    init(budgetBytes: Int) {
        self.budgetBytes = budgetBytes
    }

    /// Encodes `event` into the current message, first setting that aside as full when the
    /// event would take it past the budget.
    mutating func append(_ event: EventView) {
        let size = EncodedResponse.estimatedSize(of: event)
        if !current.isEmpty && current.estimatedBytes &+ size > budgetBytes {
            full.append(current)
            current = EncodedResponse()
        }
        current.append(event, estimatedSize: size)
        appendedCount += 1
        appendedBytes &+= size
    }

    /// The full messages, taken out.
    mutating func takeFull() -> [EncodedResponse] {
        defer { full = [] }
        return full
    }

    /// The message being filled, taken out (empty when nothing was appended since).
    mutating func takeCurrent() -> EncodedResponse {
        defer { current = EncodedResponse() }
        return current
    }
}

/// Hands an ``EncodedResponse``'s bytes to the transport as they are.
struct EncodedResponseSerializer: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: EncodedResponse) throws -> Bytes {
        Bytes(message.bytes)
    }
}
