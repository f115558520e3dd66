import EventStore
import NIOCore

/// The JSON object body of an app command, read strictly: an object whose keys are all ones the
/// route takes, each at most once, each of its type. Every refusal is ``ServerError/Code/badRequest``
/// with one sentence naming the field, so a client's typo never runs a command with a default.
struct AppRequestBody {
    private let members: [String: JSONValue]
    private let route: String

    /// Reads `buffer` as an object with keys from `fields`; an empty body stands for `{}` (the
    /// routes whose fields all have defaults need none). Throws ``ServerError`` (400) for a body
    /// that is not a JSON object, an unknown or repeated key.
    init(_ buffer: ByteBuffer, route: String, fields: Set<String>) throws(ServerError) {
        self.route = route
        let bytes = Array(buffer.readableBytesView)
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            members = [:]
            return
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw ServerError(.badRequest, "The body of \(route) is not JSON (\(error.message) at byte \(error.offset + 1)); send a JSON object.")
        }
        guard case let .object(pairs) = value else {
            throw ServerError(.badRequest, "The body of \(route) must be a JSON object, with the fields \(Self.list(fields)).")
        }
        var members: [String: JSONValue] = [:]
        for (key, member) in pairs {
            guard fields.contains(key) else {
                throw ServerError(
                    .badRequest, "The field '\(Self.shown(key))' is not one \(route) takes; its fields are \(Self.list(fields)).")
            }
            guard members.updateValue(member, forKey: key) == nil else {
                throw ServerError(.badRequest, "The field '\(Self.shown(key))' appears twice in the body of \(route); give it once.")
            }
        }
        self.members = members
    }

    /// The string `key`, or `fallback` when it is absent (nil: the field is required).
    func string(_ key: String, default fallback: String? = nil) throws(ServerError) -> String {
        switch members[key] {
        case nil:
            guard let fallback else { throw missing(key, "a string") }
            return fallback
        case let .string(text)?:
            return text
        case let other?:
            throw wrongType(key, "a string", other)
        }
    }

    /// The string `key`, or nil when it is absent.
    func optionalString(_ key: String) throws(ServerError) -> String? {
        members[key] == nil ? nil : try string(key)
    }

    /// The whole number `key` (within Int), or `fallback` when absent (nil: required).
    func int(_ key: String, default fallback: Int? = nil) throws(ServerError) -> Int {
        switch members[key] {
        case nil:
            guard let fallback else { throw missing(key, "a whole number") }
            return fallback
        case let .int(value)?:
            return Int(value)
        case let other?:
            throw wrongType(key, "a whole number", other)
        }
    }

    /// The number `key`, or `fallback` when absent (nil: required).
    func double(_ key: String, default fallback: Double? = nil) throws(ServerError) -> Double {
        switch members[key] {
        case nil:
            guard let fallback else { throw missing(key, "a number") }
            return fallback
        case let .int(value)?:
            return Double(value)
        case let .double(value)?:
            return value
        case let other?:
            throw wrongType(key, "a number", other)
        }
    }

    /// The boolean `key`, or `fallback` when absent.
    func bool(_ key: String, default fallback: Bool) throws(ServerError) -> Bool {
        switch members[key] {
        case nil: return fallback
        case let .bool(value)?: return value
        case let other?: throw wrongType(key, "true or false", other)
        }
    }

    private func missing(_ key: String, _ kind: String) -> ServerError {
        ServerError(.badRequest, "The field '\(key)' is missing from the body of \(route); give it as \(kind).")
    }

    private func wrongType(_ key: String, _ kind: String, _ value: JSONValue) -> ServerError {
        ServerError(.badRequest, "The field '\(key)' of \(route) must be \(kind), not \(Self.kind(of: value)).")
    }

    private static func kind(of value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int: return "a whole number"
        case .double: return "a number with a fraction (or one too large)"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// A client's key, cut short and without control characters, to quote in a sentence.
    private static func shown(_ key: String) -> String {
        let cleaned = String(String.UnicodeScalarView(key.unicodeScalars.filter { $0.properties.generalCategory != .control }))
        return cleaned.count > 40 ? String(cleaned.prefix(40)) + "..." : cleaned
    }

    private static func list(_ fields: Set<String>) -> String {
        fields.isEmpty ? "none" : fields.sorted().map { "'\($0)'" }.joined(separator: ", ")
    }
}
