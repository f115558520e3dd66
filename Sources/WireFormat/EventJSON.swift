import EventStoreCore
import Foundation

/// An event as one line of JSON: what `read`, `replay` and `subscribe` print with `--json`,
/// what `export` writes and `import` reads back (``EventLine``), and what the server streams.
public enum EventJSON {
    /// `--json`: one object with the keys position, stream, version, id, type, data, metadata and
    /// recordedAt, `schemaVersion` when the event's is not 1, and `personal` when some of its
    /// data is personal to a subject (``PersonalJSON``), `tags` when it carries any. Data and metadata appear as JSON
    /// values; bytes that are not JSON, and binary data (``DataFormat/binary``) whatever its
    /// bytes, appear as a base64 string with `dataEncoding` / `metadataEncoding` set to "base64".
    /// Empty metadata is null.
    public static func line(_ event: RecordedEvent) -> String {
        var object = JSONObjectWriter()
        object.add("position", event.position)
        object.add("stream", event.stream)
        object.add("version", event.version)
        object.add("id", event.id.lowercasedString)
        object.add("type", event.type)
        // Binary data is never parsed: bytes that happen to be JSON stay bytes.
        let data = event.dataFormat == .binary ? nil : JSONWriter.embeddable(event.data)
        object.add("data", rawJSON: data ?? JSONWriter.quote(event.data.base64EncodedString()))
        if event.metadata.isEmpty {
            object.add("metadata", rawJSON: "null")
        } else {
            let metadata = JSONWriter.embeddable(event.metadata)
            object.add("metadata", rawJSON: metadata ?? JSONWriter.quote(event.metadata.base64EncodedString()))
            if metadata == nil { object.add("metadataEncoding", "base64") }
        }
        object.add("recordedAt", ISO8601.string(microseconds: event.recordedAtMicroseconds))
        if event.schemaVersion != 1 { object.add("schemaVersion", UInt64(event.schemaVersion)) }
        if !event.personal.isEmpty { object.add("personal", rawJSON: PersonalJSON.json(event.personal)) }
        if !event.tags.isEmpty { object.add("tags", rawJSON: QueryJSON.stringList(event.tags)) }
        if data == nil { object.add("dataEncoding", "base64") }
        return object.finish()
    }
}
