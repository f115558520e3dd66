import Foundation

/// The form in which the store keeps an event's data and metadata: bytes that are one JSON
/// value are kept without insignificant white space (member order, number spelling and string
/// escapes as written); any other bytes are kept as they are. So the same JSON, however it was
/// spaced, is the same content for idempotency, and an export re-serialized compactly imports
/// as the events it came from (docs/FORMAT.md, "Data and metadata").
public enum StoredForm {
    /// The bytes the store keeps for `bytes`.
    public static func of(_ bytes: Data) -> Data {
        // Most JSON arrives compact: one pass that finds nothing to remove keeps the bytes.
        guard bytes.withUnsafeBytes({ JSONScanner.hasWhitespaceOutsideStrings($0) }) else { return bytes }
        return bytes.withUnsafeBytes { JSONScanner.compacted($0) }.map { Data($0) } ?? bytes
    }

    /// The event with its data and metadata in stored form.
    static func of(_ event: NewEvent) -> NewEvent {
        var stored = event
        stored.data = of(event.data)
        stored.metadata = of(event.metadata)
        return stored
    }
}
