import EventStoreCore

/// Builds one line of JSON by hand, so values that are already JSON (an event's data) go in as
/// they are, and keys keep the documented order.
public struct JSONObjectWriter {
    private(set) var text = "{"
    private var isFirst = true

    public init() {}

    private mutating func key(_ name: String) {
        if !isFirst { text += "," }
        isFirst = false
        text += JSONWriter.quote(name)
        text += ":"
    }

    public mutating func add(_ name: String, _ value: String?) {
        key(name)
        text += value.map(JSONWriter.quote) ?? "null"
    }

    public mutating func add(_ name: String, _ value: UInt64) {
        key(name)
        text += String(value)
    }

    public mutating func add(_ name: String, _ value: Int) {
        key(name)
        text += String(value)
    }

    public mutating func add(_ name: String, _ value: Bool) {
        key(name)
        text += value ? "true" : "false"
    }

    /// Adds text that is already valid JSON.
    public mutating func add(_ name: String, rawJSON: String) {
        key(name)
        text += rawJSON
    }

    /// The finished object.
    public mutating func finish() -> String {
        text + "}"
    }
}
