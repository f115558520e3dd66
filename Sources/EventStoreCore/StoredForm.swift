import Foundation

/// The form in which the store keeps an event's data and metadata: bytes that are one JSON
/// value are kept without insignificant white space (member order, number spelling and string
/// escapes as written); any other bytes are kept as they are. So the same JSON, however it was
/// spaced, is the same content for idempotency, and an export re-serialized compactly imports
/// as the events it came from (docs/FORMAT.md, "Data and metadata").
package enum StoredForm {
    /// The bytes the store keeps for data of `format`: binary data as given, JSON compacted.
    package static func of(_ bytes: Data, format: DataFormat) -> Data {
        format == .binary ? bytes : of(bytes)
    }

    /// The bytes the store keeps for `bytes`.
    package static func of(_ bytes: Data) -> Data {
        // Most JSON arrives compact: one pass that finds nothing to remove keeps the bytes.
        guard bytes.withUnsafeBytes({ JSONScanner.hasWhitespaceOutsideStrings($0) }) else { return bytes }
        return bytes.withUnsafeBytes { JSONScanner.compacted($0) }.map { Data($0) } ?? bytes
    }

    /// Puts every event's data and metadata in stored form, changing (and so copying) only the
    /// events whose bytes change.
    package static func apply(to appends: inout [StreamAppend]) {
        for part in appends.indices {
            for event in appends[part].events.indices {
                let data = appends[part].events[event].data
                let stored = of(data, format: appends[part].events[event].dataFormat)
                if stored.count != data.count { appends[part].events[event].data = stored }
                let metadata = appends[part].events[event].metadata
                let storedMetadata = of(metadata)
                if storedMetadata.count != metadata.count { appends[part].events[event].metadata = storedMetadata }
            }
        }
    }
}
