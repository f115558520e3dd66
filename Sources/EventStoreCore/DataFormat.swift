/// What an event's data is: JSON, which the store keeps compact and which upcasters, personal
/// data and JSON output read as JSON; or bytes of any kind, which the store keeps exactly as
/// given and never parses (a content type beside JSON, as other stores have one).
///
/// Recorded with each event (a flag of its record, docs/FORMAT.md) and part of its content for
/// idempotency and checksums. The same bytes appended as JSON and as binary are two different
/// contents.
public enum DataFormat: Sendable, Hashable {
    /// JSON (the default): one JSON value, kept without insignificant white space. Bytes that are
    /// not JSON are still accepted and kept as given, as they always were.
    case json
    /// Opaque bytes: kept byte for byte (never compacted), shown as base64 in JSON output
    /// (`"dataEncoding":"base64"`), passed through upcasting unchanged, and refused with
    /// personal data (whose parts are JSON members).
    case binary
}
