import Foundation

/// The value format of the `events` table (record formats 1 and 2, `docs/FORMAT.md`), for tools
/// that read or write a store's bytes themselves, and for the fuzzer that feeds the decoder
/// arbitrary bytes.
package enum RecordFormat {
    /// Decodes one value of the `events` table, the record kept at `position`.
    ///
    /// Any bytes at all may be given. Throws ``EventStoreError/Code/damaged`` when they are not a
    /// record of format 1 or 2 whose lengths add up to its size, when a format-2 record's checksum
    /// does not match its bytes and `position`, or when the stream name or type is not UTF-8.
    /// The flags and reserved bytes are not checked: readers ignore them.
    package static func decode(_ bytes: UnsafeRawBufferPointer, position: UInt64) throws(EventStoreError) -> RecordedEvent {
        try RecordView(bytes, position: position).recordedEvent(at: position)
    }

    /// Encodes an event as the value the store keeps for it at `event.position`, in the current
    /// record format (2, with its checksum; the position is the key, not part of the value, but
    /// the checksum covers it); ``decode(_:position:)`` gives the event back.
    ///
    /// Throws ``EventStoreError/Code/invalidInput`` when a field does not fit its length field
    /// (a stream name or type of more than 65,535 bytes, or empty; data or metadata of 4 GiB or
    /// more). The store's own limits are narrower, and checked by appends, not here.
    package static func encode(_ event: RecordedEvent) throws(EventStoreError) -> [UInt8] {
        var stream = event.stream
        var type = event.type
        let streamBytes = stream.utf8.count
        let typeBytes = type.utf8.count
        guard (1...Int(UInt16.max)).contains(streamBytes), (1...Int(UInt16.max)).contains(typeBytes),
            event.data.count <= Int(UInt32.max), event.metadata.count <= Int(UInt32.max)
        else {
            throw EventStoreError(
                .invalidInput, "The event at position \(event.position) has a field that does not fit a record's length fields.")
        }
        let size = RecordCodec.encodedSize(
            streamBytes: streamBytes, typeBytes: typeBytes, dataBytes: event.data.count, metadataBytes: event.metadata.count,
            tags: event.tags)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            stream.withUTF8 { streamUTF8 in
                type.withUTF8 { typeUTF8 in
                    RecordCodec.encode(
                        into: UnsafeMutableRawBufferPointer(buffer), position: event.position,
                        stream: UnsafeRawBufferPointer(streamUTF8),
                        type: UnsafeRawBufferPointer(typeUTF8), version: event.version, recordedAt: event.recordedAtMicroseconds,
                        id: event.id, data: event.data, metadata: event.metadata, schemaVersion: event.schemaVersion, tags: event.tags,
                        dataFormat: event.dataFormat)
                }
            }
            count = size
        }
    }
}
