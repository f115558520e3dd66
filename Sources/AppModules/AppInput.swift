import EventStoreCore

/// The JSON object input of a command, read strictly: its keys are all fields the command takes,
/// each at most once, each of its declared type. Every refusal is an ``AppInputError`` naming the
/// field at fault, so a client's typo never runs a command with a default.
public struct AppInput: Sendable {
    private let members: [String: JSONValue]
    /// How the input is named in sentences ("the body of POST /apps/notes/add", "the input of
    /// esctl app notes add").
    public let source: String

    /// Reads `bytes` as an object of `fields` (the command's declared fields); empty or white
    /// space stands for `{}` (a command whose fields all have defaults needs none). Throws
    /// ``AppInputError`` for bytes that are not a JSON object, an unknown or repeated key, a
    /// value not of its field's type, or a required field missing.
    public init(json bytes: [UInt8], source: String, fields: [AppField]) throws(AppInputError) {
        let pairs = try AppInput.pairs(json: bytes, source: source, fields: fields)
        var members: [String: JSONValue] = [:]
        for (key, member) in pairs {
            guard members.updateValue(member, forKey: key) == nil else {
                throw AppInputError(AppInput.shown(key), "The field '\(AppInput.shown(key))' appears twice in \(source); give it once.")
            }
        }
        try self.init(members: members, source: source, fields: fields)
    }

    /// The members of `bytes` as a JSON object, in order; none for empty or white space. Throws
    /// ``AppInputError`` for bytes that are not a JSON object (`fields` name what it should hold):
    /// a face may check this before it opens anything.
    public static func pairs(json bytes: [UInt8], source: String, fields: [AppField] = []) throws(AppInputError) -> [(String, JSONValue)] {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return [] }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw AppInputError(nil, "\(AppInput.capitalized(source)) is not JSON (\(error.message) at byte \(error.offset + 1)); send a JSON object.")
        }
        guard case let .object(pairs) = value else {
            let expected = fields.isEmpty ? "" : ", with the fields \(Self.list(fields))"
            throw AppInputError(nil, "\(Self.capitalized(source)) must be a JSON object\(expected).")
        }
        return pairs
    }

    /// An input of `members` already parsed, checked against `fields` as ``init(json:source:fields:)``
    /// checks it: a key that is not a field, a required field missing, a value not of its field's
    /// type. Throws ``AppInputError`` naming the field.
    public init(members: [String: JSONValue], source: String, fields: [AppField]) throws(AppInputError) {
        self.source = source
        self.members = members
        let names = Set(fields.map(\.name))
        for key in members.keys.sorted() where !names.contains(key) {
            throw AppInputError(
                AppInput.shown(key), "The field '\(AppInput.shown(key))' is not one \(AppInput.owner(source)) takes; its fields are \(AppInput.list(fields)).")
        }
        for field in fields {
            guard let value = members[field.name] else {
                if field.required { throw missing(field.name, field.kind.phrase) }
                continue
            }
            guard field.kind.admits(value) else { throw wrongType(field.name, field.kind.phrase, value) }
        }
    }

    /// The string `key`, or `fallback` when it is absent (nil: the field is required).
    public func string(_ key: String, default fallback: String? = nil) throws(AppInputError) -> String {
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
    public func optionalString(_ key: String) throws(AppInputError) -> String? {
        members[key] == nil ? nil : try string(key)
    }

    /// The whole number `key` (within Int), or `fallback` when absent (nil: required).
    public func int(_ key: String, default fallback: Int? = nil) throws(AppInputError) -> Int {
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
    public func double(_ key: String, default fallback: Double? = nil) throws(AppInputError) -> Double {
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
    public func bool(_ key: String, default fallback: Bool) throws(AppInputError) -> Bool {
        switch members[key] {
        case nil: return fallback
        case let .bool(value)?: return value
        case let other?: throw wrongType(key, "true or false", other)
        }
    }

    /// A refusal of the field `key`'s value, in one sentence the command writes.
    public func invalid(_ key: String, _ sentence: String) -> AppInputError {
        AppInputError(key, sentence)
    }

    private func missing(_ key: String, _ kind: String) -> AppInputError {
        AppInputError(key, "The field '\(key)' is missing from \(source); give it as \(kind).")
    }

    private func wrongType(_ key: String, _ kind: String, _ value: JSONValue) -> AppInputError {
        AppInputError(key, "The field '\(key)' of \(Self.owner(source)) must be \(kind), not \(Self.kind(of: value)).")
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

    /// "the body of POST /x" → "POST /x", "the input of esctl app a b" → "esctl app a b": what
    /// takes the fields.
    private static func owner(_ source: String) -> String {
        for lead in ["the body of ", "the input of "] where source.hasPrefix(lead) {
            return String(source.dropFirst(lead.count))
        }
        return source
    }

    private static func capitalized(_ text: String) -> String {
        text.prefix(1).uppercased() + text.dropFirst()
    }

    /// Text from a client, cut short and without control characters, to quote in a sentence.
    static func shown(_ key: String) -> String {
        let cleaned = String(String.UnicodeScalarView(key.unicodeScalars.filter { $0.properties.generalCategory != .control }))
        return cleaned.count > 40 ? String(cleaned.prefix(40)) + "..." : cleaned
    }

    private static func list(_ fields: [AppField]) -> String {
        fields.isEmpty ? "none" : fields.map(\.name).sorted().map { "'\($0)'" }.joined(separator: ", ")
    }
}

extension AppField.Kind {
    /// The kind in a sentence.
    var phrase: String {
        switch self {
        case .string: return "a string"
        case .integer: return "a whole number"
        case .number: return "a number"
        case .boolean: return "true or false"
        }
    }

    /// Whether `value` is of this kind (a whole number is a number too).
    func admits(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.string, .string), (.integer, .int), (.number, .int), (.number, .double), (.boolean, .bool): return true
        default: return false
        }
    }
}

/// Input a command does not take: a body that is not a JSON object, a field it does not have,
/// one missing or of the wrong type, a value out of its range. Nothing ran. HTTP 400 with the
/// code `badRequest` (and the field at fault as `field`), exit 64.
public struct AppInputError: CodedError, Equatable {
    /// The field at fault, when one is.
    public let field: String?
    public let message: String

    public init(_ field: String?, _ message: String) {
        self.field = field
        self.message = message
    }

    public var codeName: String { "badRequest" }
    public var category: ErrorCategory { .invalidInput }
    public var httpStatus: Int { 400 }
    public var description: String { message }

    public var details: [(String, JSONValue)] {
        field.map { [("field", .string($0))] } ?? []
    }
}
