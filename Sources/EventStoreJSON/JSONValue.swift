/// A JSON value as a tree, with object members kept in order, so the same value always
/// serializes to the same text.
public indirect enum JSONValue: Sendable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member named `key` of an object; nil for anything else or a missing member.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// The text of a string value.
    public var stringValue: String? {
        if case let .string(text) = self { return text }
        return nil
    }

    /// An integer value (a double with no fraction counts).
    public var intValue: Int64? {
        switch self {
        case let .int(value): return value
        case let .double(value) where value == value.rounded() && abs(value) < 9.2e18: return Int64(value)
        default: return nil
        }
    }

    /// A number as a double.
    public var doubleValue: Double? {
        switch self {
        case let .int(value): return Double(value)
        case let .double(value): return value
        default: return nil
        }
    }

    /// A boolean value.
    public var boolValue: Bool? {
        if case let .bool(value) = self { return value }
        return nil
    }

    /// The elements of an array.
    public var arrayValue: [JSONValue]? {
        if case let .array(elements) = self { return elements }
        return nil
    }

    /// Whether this is null.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Parses JSON text.
    public init(parsing bytes: [UInt8]) throws(JSONError) {
        self = try JSONScanner.parse(bytes)
    }

    /// Compact JSON text: no white space, members in their order, strings escaped as
    /// `JSONWriter.quote(_:)` does, integers exact and doubles in their shortest exact form.
    public var serialized: String {
        var text = ""
        write(to: &text)
        return text
    }

    public var description: String { serialized }

    private func write(to text: inout String) {
        switch self {
        case .null: text += "null"
        case let .bool(value): text += value ? "true" : "false"
        case let .int(value): text += String(value)
        case let .double(value): text += JSONWriter.number(value)
        case let .string(value): text += JSONWriter.quote(value)
        case let .array(elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                element.write(to: &text)
            }
            text += "]"
        case let .object(members):
            text += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { text += "," }
                text += JSONWriter.quote(key)
                text += ":"
                value.write(to: &text)
            }
            text += "}"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements) }
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue {
    /// A string, or null when nil.
    public static func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    /// An unsigned integer (positions, versions, counts).
    public static func uint(_ value: UInt64) -> JSONValue {
        value <= UInt64(Int64.max) ? .int(Int64(value)) : .double(Double(value))
    }
    /// An integer.
    public static func int(_ value: Int) -> JSONValue { .int(Int64(value)) }
}
