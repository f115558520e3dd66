import Foundation

/// A recorded event read in place, in the store's memory map: nothing is copied until asked for.
/// From a stream read (`EventStore.forEachEvent(inStream:)`) it is the event as stored: the
/// store's upcasters do not run on it, and data marked personal is its sealed envelope
/// (`{"$personal":...}`, docs/FORMAT.md), not opened. From a query read
/// (`LogReading.forEachEvent(matching:after:limit:_:)`) it is the event as `read` returns it.
///
/// Valid only inside the closure that receives it: its buffers point into a read transaction
/// that ends when the closure returns. Copy out what you keep (``recordedEvent()``,
/// `Data(view.data)`, ``type``, ``stream``).
public struct EventView {
    /// The event's global position.
    public let position: UInt64
    @_spi(Records) public let record: RecordView
    /// The stream name when the reader already knows it (a stream read), so it is not decoded again.
    @usableFromInline let knownStream: String?

    @inlinable
    @_spi(Records) public init(position: UInt64, record: RecordView, knownStream: String? = nil) {
        self.position = position
        self.record = record
        self.knownStream = knownStream
    }

    /// Its version within its stream, from 1.
    public var version: UInt64 { record.version }
    /// Its id.
    public var id: UUID { record.id }
    /// When it was recorded, in microseconds since 1970-01-01T00:00:00Z.
    public var recordedAtMicroseconds: Int64 { record.recordedAt }
    /// The version of its type's schema its data was written in (1 until the type evolves).
    public var schemaVersion: UInt16 { record.schemaVersion }
    /// What its data is: JSON or bytes the store never parses (``DataFormat``).
    public var dataFormat: DataFormat { record.dataFormat }
    /// When it was recorded, as a `Date`.
    public var recordedAt: Date { RecordedEvent.date(microseconds: record.recordedAt) }
    /// The stream name's UTF-8 bytes, in place.
    public var streamUTF8: UnsafeRawBufferPointer { record.streamBytes }
    /// The type name's UTF-8 bytes, in place.
    public var typeUTF8: UnsafeRawBufferPointer { record.typeBytes }
    /// The payload bytes, in place.
    public var data: UnsafeRawBufferPointer { record.dataBytes }
    /// The metadata bytes, in place (empty when none were given).
    public var metadata: UnsafeRawBufferPointer { record.metadataBytes }
    /// Hands each of the event's tags, its UTF-8 bytes in place, to `body`, in order.
    public func forEachTag(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try record.forEachTag(body) }
    /// The bytes the event's tags take as stored (0 without tags): each tag's bytes and one
    /// more, and one for their count.
    public var tagsByteCount: Int { record.tagsLength }
    /// The event's tags (empty when none), as strings of their own.
    public var tags: [String] { record.tags }
    /// The stream name, as a string of its own.
    public var stream: String { knownStream ?? String(decoding: record.streamBytes, as: UTF8.self) }
    /// The type name, as a string of its own.
    public var type: String { String(decoding: record.typeBytes, as: UTF8.self) }

    /// A copy of the event that outlives the read (and may go to other tasks: the view may not).
    public func recordedEvent() -> RecordedEvent { copy() }

    /// ``recordedEvent()``, inlinable for the backends' read loops (SPI, not an API).
    @inlinable
    @_spi(Records) public func copy() -> RecordedEvent {
        RecordedEvent(
            position: position, stream: knownStream ?? String(decoding: record.streamBytes, as: UTF8.self), version: record.version,
            id: record.id, type: String(decoding: record.typeBytes, as: UTF8.self), data: RecordView.copy(record.dataBytes),
            metadata: RecordView.copy(record.metadataBytes), recordedAtMicroseconds: record.recordedAt, schemaVersion: record.schemaVersion,
            tags: record.tags, dataFormat: record.dataFormat)
    }
}

extension EventView {
    /// Runs `body` on a view of `event`, its record written into a buffer that lives for the
    /// call: how a read hands an event it had to copy (opened, upcast, or from a backend that
    /// cannot read in place) to code written for views.
    package static func withView<Result>(of event: RecordedEvent, _ body: (EventView) throws -> Result) throws -> Result {
        var stream = event.stream
        var type = event.type
        return try stream.withUTF8 { stream in
            try type.withUTF8 { type in
                let size = RecordCodec.encodedSize(
                    streamBytes: stream.count, typeBytes: type.count, dataBytes: event.data.count, metadataBytes: event.metadata.count,
                    tags: event.tags)
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
                defer { buffer.deallocate() }
                RecordCodec.encode(
                    into: buffer, position: event.position, stream: UnsafeRawBufferPointer(stream), type: UnsafeRawBufferPointer(type),
                    version: event.version, recordedAt: event.recordedAtMicroseconds, id: event.id, data: event.data,
                    metadata: event.metadata, schemaVersion: event.schemaVersion, tags: event.tags, dataFormat: event.dataFormat)
                let record = try RecordView(UnsafeRawBufferPointer(buffer), position: event.position)
                return try body(EventView(position: event.position, record: record, knownStream: event.stream))
            }
        }
    }
}

/// The view's buffers live only as long as the closure that received it runs, on that thread.
@available(*, unavailable)
extension EventView: Sendable {}
