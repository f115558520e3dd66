import EventStoreCore
import Foundation

/// One line of esctl's NDJSON event format, as read by `append --batch` and `import`:
/// `{"stream":S,"type":T,"data":JSON?,"id":UUID?,"metadata":JSON?,"expectedVersion":V?,"recordedAt":TIME?,"schemaVersion":N?,"personal":[...]?,"tags":[T,...]?}`
/// (no `data` is `{}`; no `schemaVersion` is 1; `personal` as ``PersonalJSON`` reads it; `tags` a list of strings).
/// Data or metadata that is not JSON comes as a base64 string with `"dataEncoding":"base64"`
/// (or `"metadataEncoding"`), as `export` and `replay --json` write it; data given so is binary
/// (``DataFormat/binary``): kept byte for byte, never parsed as JSON. `recordedAt` is an
/// ISO 8601 time as `export` writes it (only `import` keeps it). Other keys (such as the
/// `position` and `version` that `export` writes) are ignored.
///
/// It lives in its own module so that esctl, the server and the fuzzer parse lines the same way.
public struct EventLine: Sendable {
    public let stream: String
    public let event: NewEvent
    /// `"any"`, `"no-stream"`, `"exists"` or a version number, when the line gives one.
    public let expectedVersion: ExpectedVersion?
    /// The time the event was recorded, in microseconds since 1970, when the line gives one
    /// (`"recordedAt"`, as `export` writes it).
    public let recordedAt: Int64?

    /// Parses one line (any bytes at all). Throws ``WireFormatError`` with
    /// ``WireFormatError/Code/invalidLine`` naming the line number and what is wrong, the store's
    /// limits on names and sizes included (so a bad line is named, not a whole batch refused).
    public init(_ line: ArraySlice<UInt8>, number: Int) throws(WireFormatError) {
        try self.init(object: Array(line), number: number, stream: nil)
    }

    /// Parses one event object: a line of its own (`stream` nil: the object names its stream),
    /// or an element of an array whose stream the caller names (``EventArray``: the object may
    /// repeat that stream but name no other, nor an expected version).
    init(object bytes: [UInt8], number: Int, stream given: String?) throws(WireFormatError) {
        func fail(_ problem: String) -> WireFormatError {
            given == nil
                ? WireFormatError(.invalidLine, "Line \(number) is not a valid event: \(problem); nothing was written.", line: number)
                : WireFormatError(.invalidEvent, "Event \(number) of the array is not a valid event: \(problem); nothing was written.", line: number)
        }
        let members: [(key: String, value: Range<Int>)]
        do {
            members = try JSONScanner.members(ofObject: bytes)
        } catch {
            throw fail("\(error)")
        }
        func raw(_ key: String) -> ArraySlice<UInt8>? {
            members.first { $0.key == key }.map { bytes[$0.value] }
        }
        func string(_ key: String) throws(WireFormatError) -> String? {
            guard let value = raw(key) else { return nil }
            guard value.first == UInt8(ascii: "\"") else { throw fail("\"\(key)\" must be a string") }
            return try text(value)
        }
        func text(_ value: ArraySlice<UInt8>) throws(WireFormatError) -> String {
            do {
                return try JSONScanner.string(value)
            } catch {
                throw fail("\(error)")
            }
        }
        let stream: String
        if let given {
            if let named = try string("stream"), named != given {
                throw fail("it names the stream '\(named)', but the request's path names '\(given)'")
            }
            if raw("expectedVersion") != nil { throw fail("\"expectedVersion\" goes in the Expected-Version header, not in an event") }
            stream = given
        } else {
            guard let named = try string("stream") else { throw fail("\"stream\" is missing") }
            stream = named
        }
        guard let type = try string("type") else { throw fail("\"type\" is missing") }
        // No data is an empty object, as `esctl append` without --data records it.
        let rawData = raw("data") ?? ArraySlice(Array("{}".utf8))
        func decoded(_ value: ArraySlice<UInt8>, encoding key: String) throws(WireFormatError) -> Data {
            guard let encoding = try string(key) else { return Data(value) }
            guard encoding == "base64" else { throw fail("\"\(key)\" must be \"base64\"") }
            guard value.first == UInt8(ascii: "\""), let bytes = Data(base64Encoded: try text(value)) else {
                throw fail("a value marked \"\(key)\":\"base64\" must be a base64 string")
            }
            return bytes
        }
        let data = try decoded(rawData, encoding: "dataEncoding")
        var metadata = Data()
        if let value = raw("metadata"), !value.elementsEqual("null".utf8) {
            metadata = try decoded(value, encoding: "metadataEncoding")
        }
        var id: UUID?
        if let text = try string("id") {
            guard let uuid = UUID(uuidString: text) else { throw fail("\"id\" is not a UUID") }
            id = uuid
        }
        var expected: ExpectedVersion?
        if let value = raw("expectedVersion") {
            // A string, or a bare JSON number: both read as the text form does.
            let given = value.first == UInt8(ascii: "\"") ? try text(value) : String(decoding: value, as: UTF8.self)
            guard let parsed = ExpectedVersion(text: given) else {
                // The sentence without its full stop: the line's own sentence goes on after it.
                throw fail(String(ExpectedVersion.refusal(of: given, as: "\"expectedVersion\"").dropLast()))
            }
            expected = parsed
        }
        var recordedAt: Int64?
        if let text = try string("recordedAt") {
            guard let micros = ISO8601.microseconds(parsing: text) else {
                throw fail("\"recordedAt\" must be an ISO 8601 time such as 2026-11-22T08:30:00.000000Z")
            }
            guard Limits.recordedAtRange.contains(micros) else { throw fail("\"recordedAt\" must be within the years 1 to 9999") }
            recordedAt = micros
        }
        var schemaVersion: UInt16 = 1
        if let value = raw("schemaVersion") {
            guard let number = UInt16(String(decoding: value, as: UTF8.self)), number >= 1 else {
                throw fail("\"schemaVersion\" must be a whole number from 1 to 65535")
            }
            schemaVersion = number
        }
        var personal: [PersonalData] = []
        if let value = raw("personal"), !value.elementsEqual("null".utf8) {
            guard let parts = PersonalJSON.parts(value) else { throw fail(PersonalJSON.problem) }
            personal = parts
        }
        var tags: [String] = []
        if let value = raw("tags"), !value.elementsEqual("null".utf8) {
            guard let list = QueryJSON.strings(value) else { throw fail("\"tags\" must be a list of strings") }
            tags = list
        }
        // Data given as base64 is bytes: binary, whatever they hold (an export of binary data,
        // or of bytes that were never JSON, imports byte for byte).
        let dataFormat: DataFormat = raw("dataEncoding") == nil ? .json : .binary
        let event = NewEvent(
            id: id, type: type, data: data, metadata: metadata, schemaVersion: schemaVersion, personal: personal, tags: tags,
            dataFormat: dataFormat)
        do {
            try Limits.validateName(stream, kind: "stream")
            try Limits.validate(event)
        } catch {
            // The store's sentence, as a clause of this one.
            let clause = error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message
            throw fail(clause.prefix(1).lowercased() + clause.dropFirst())
        }
        self.stream = stream
        self.event = event
        self.expectedVersion = expected
        self.recordedAt = recordedAt
    }

    /// A line's fields as they are.
    public init(stream: String, event: NewEvent, expectedVersion: ExpectedVersion?, recordedAt: Int64? = nil) {
        self.stream = stream
        self.event = event
        self.expectedVersion = expectedVersion
        self.recordedAt = recordedAt
    }

    /// Whether a line holds only white space (such lines are skipped).
    public static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }
}
