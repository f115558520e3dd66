/// Why a piece of text is not the JSON that was expected, and where (a byte offset).
public struct JSONError: Error, Equatable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// Where, as a byte offset from 0.
    public let offset: Int

    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { "\(message) at byte \(offset + 1)" }
}

/// A strict RFC 8259 JSON reader over bytes that validates values and hands back the exact bytes
/// of each one, so esctl stores a caller's JSON as given, byte for byte.
///
/// Nesting is limited (``maximumDepth``) so hostile input cannot exhaust the stack.
package struct JSONScanner {
    /// The deepest nesting of arrays and objects accepted.
    package static let maximumDepth = 512

    /// The bytes being read; valid only while the scanner is (scanners never escape the
    /// functions that make them).
    let bytes: UnsafeRawBufferPointer
    var index = 0
    private var depth = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Runs `body` with a scanner over `bytes`.
    static func scanning<R>(_ bytes: [UInt8], _ body: (inout JSONScanner) throws(JSONError) -> R) throws(JSONError) -> R {
        let result: Result<R, JSONError> = bytes.withUnsafeBytes { raw in
            var scanner = JSONScanner(raw)
            do throws(JSONError) { return .success(try body(&scanner)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Whether `bytes` is exactly one JSON value, with optional surrounding white space.
    package static func isValid(_ bytes: [UInt8]) -> Bool {
        (try? validate(bytes)) != nil
    }

    /// Checks that `bytes` is exactly one JSON value; throws where it is not.
    package static func validate(_ bytes: [UInt8]) throws(JSONError) {
        try scanning(bytes) { scanner throws(JSONError) in try scanner.validateWhole() }
    }

    /// Checks that the bytes are exactly one JSON value.
    package static func validate(_ bytes: UnsafeRawBufferPointer) throws(JSONError) {
        var scanner = JSONScanner(bytes)
        try scanner.validateWhole()
    }

    private mutating func validateWhole() throws(JSONError) {
        skipWhitespace()
        _ = try skipValue()
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected text after the JSON value") }
    }

    /// Reads one object whose members are handed back as raw value byte ranges, in order; the
    /// whole input must be that object. Keys must be unique.
    package static func members(ofObject bytes: [UInt8]) throws(JSONError) -> [(key: String, value: Range<Int>)] {
        let result: Result<[(key: String, value: Range<Int>)], JSONError> = bytes.withUnsafeBytes { raw in
            var members: [(key: String, value: Range<Int>)] = []
            do throws(JSONError) {
                try forEachMember(ofObject: raw) { keyRange, value throws(JSONError) in
                    let key = try string(UnsafeRawBufferPointer(rebasing: raw[keyRange]))
                    if members.contains(where: { $0.key == key }) {
                        throw JSONError(message: "the key \"\(key)\" appears twice", offset: keyRange.lowerBound)
                    }
                    members.append((key, value))
                }
                return .success(members)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads one object, handing each member's key range (quotes included) and value range to
    /// `body` as it goes, without allocating; the whole input must be that object. Does not check
    /// that keys are unique; `body` may, by throwing.
    /// With `countingTheObject`, the object counts toward ``maximumDepth`` (as in `Decodable`'s).
    package static func forEachMember(
        ofObject bytes: UnsafeRawBufferPointer, countingTheObject: Bool = false, _ body: (Range<Int>, Range<Int>) throws(JSONError) -> Void
    ) throws(JSONError) {
        try whole(bytes, "expected a JSON object", "unexpected text after the object") { start throws(JSONError) in
            try forEachMember(ofObjectIn: bytes, at: start, depth: countingTheObject ? 1 : 0, body)
        }
    }

    /// ``forEachMember(ofObject:countingTheObject:_:)`` where `body` reads each value itself (see
    /// ``forEachMember(ofObjectIn:at:depth:reading:)``); the object does not count toward the depth.
    package static func forEachMember(ofObject bytes: UnsafeRawBufferPointer, reading body: (Range<Int>, Int) throws(JSONError) -> Int) throws(JSONError) {
        try whole(bytes, "expected a JSON object", "unexpected text after the object") { start throws(JSONError) in
            try forEachMember(ofObjectIn: bytes, at: start, depth: 0, reading: body)
        }
    }

    /// Reads the object at `start` of `bytes` (its `{`), handing each member's key range and value
    /// range (offsets in `bytes`) to `body`, and returns the offset just after it. `depth` is the
    /// object's own nesting as the caller's read of the whole text counts it (the containers
    /// around it, and itself when it counts), so that values nested inside meet ``maximumDepth``
    /// as they would there: a caller reads nested objects in one pass, without skipping over them
    /// first.
    package static func forEachMember(
        ofObjectIn bytes: UnsafeRawBufferPointer, at start: Int, depth: Int, _ body: (Range<Int>, Range<Int>) throws(JSONError) -> Void
    ) throws(JSONError) -> Int {
        try forEachMember(ofObjectIn: bytes, at: start, depth: depth) { key, valueStart throws(JSONError) in
            let value = try self.value(in: bytes, at: valueStart, depth: depth)
            try body(key, value)
            return value.upperBound
        }
    }

    /// ``forEachMember(ofObjectIn:at:depth:_:)`` where `body` reads each value itself: it is handed
    /// the key's range and the offset where the value starts, and returns the offset just after
    /// the value (``value(in:at:depth:)`` for one it does not read).
    package static func forEachMember(
        ofObjectIn bytes: UnsafeRawBufferPointer, at start: Int, depth: Int, reading body: (Range<Int>, Int) throws(JSONError) -> Int
    ) throws(JSONError) -> Int {
        try walk(bytes, at: start, depth: depth, UInt8(ascii: "{"), UInt8(ascii: "}"), "expected a JSON object") { scanner throws(JSONError) in
            let keyOffset = scanner.index
            guard scanner.peek() == UInt8(ascii: "\"") else { throw scanner.error("expected a string key") }
            try scanner.skipValue()
            let keyRange = keyOffset..<scanner.index
            scanner.skipWhitespace()
            try scanner.expect(UInt8(ascii: ":"))
            scanner.skipWhitespace()
            scanner.index = try body(keyRange, scanner.index)
        }
    }

    /// Walks the container at `start` of `bytes` (its `opening` byte, at nesting `depth`) up to
    /// its `closing` byte, calling `item` with the scanner at each member or element (past the
    /// white space before it) to move it past that item; returns the offset just after the
    /// container. Throws `expected` when no such container starts there.
    private static func walk(
        _ bytes: UnsafeRawBufferPointer, at start: Int, depth: Int, _ opening: UInt8, _ closing: UInt8, _ expected: String,
        _ item: (inout JSONScanner) throws(JSONError) -> Void
    ) throws(JSONError) -> Int {
        var scanner = JSONScanner(bytes)
        scanner.index = start
        scanner.depth = depth
        guard scanner.depth <= maximumDepth else { throw scanner.error("the JSON is nested too deeply") }
        guard scanner.peek() == opening else { throw scanner.error(expected) }
        scanner.index += 1
        scanner.skipWhitespace()
        if scanner.peek() == closing {
            scanner.index += 1
            return scanner.index
        }
        repeat {
            scanner.skipWhitespace()
            try item(&scanner)
        } while try !scanner.passSeparator(closing: closing)
        return scanner.index
    }

    /// After a member or an element: passes white space and then a `,` (false: another follows)
    /// or the container's `close` (true: it ended).
    private mutating func passSeparator(closing close: UInt8) throws(JSONError) -> Bool {
        skipWhitespace()
        if peek() == UInt8(ascii: ",") {
            index += 1
            return false
        }
        try expect(close)
        return true
    }

    /// The range of the one value at `start` of `bytes`, checked, its containers counted from
    /// `depth` (the containers around it) toward ``maximumDepth``.
    package static func value(in bytes: UnsafeRawBufferPointer, at start: Int, depth: Int) throws(JSONError) -> Range<Int> {
        var scanner = JSONScanner(bytes)
        scanner.index = start
        scanner.depth = depth
        return try scanner.skipValue()
    }

    /// Runs `read` at the start of the one value of `bytes` (white space around it allowed), which
    /// ends where `read` says it does; throws `expected` for no value, `trailing` for text after it.
    private static func whole(
        _ bytes: UnsafeRawBufferPointer, _ expected: String, _ trailing: String, _ read: (Int) throws(JSONError) -> Int
    ) throws(JSONError) {
        var scanner = JSONScanner(bytes)
        scanner.skipWhitespace()
        guard scanner.peek() != nil else { throw scanner.error(expected) }
        scanner.index = try read(scanner.index)
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw scanner.error(trailing) }
    }

    /// Reads one array whose elements are handed back as raw byte ranges, in order; the whole
    /// input must be that array (so each element's bytes can be kept exactly as given).
    package static func elements(ofArray bytes: [UInt8]) throws(JSONError) -> [Range<Int>] {
        let result: Result<[Range<Int>], JSONError> = bytes.withUnsafeBytes { raw in
            var elements: [Range<Int>] = []
            do throws(JSONError) {
                try forEachElement(ofArray: raw) { elements.append($0) }
                return .success(elements)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads one array, handing each element's byte range to `body` as it goes, without
    /// allocating; the whole input must be that array.
    package static func forEachElement(ofArray bytes: UnsafeRawBufferPointer, _ body: (Range<Int>) throws(JSONError) -> Void) throws(JSONError) {
        try whole(bytes, "expected a JSON array", "unexpected text after the array") { start throws(JSONError) in
            try forEachElement(ofArrayIn: bytes, at: start, depth: 0) { elementStart throws(JSONError) in
                let element = try value(in: bytes, at: elementStart, depth: 0)
                try body(element)
                return element.upperBound
            }
        }
    }

    /// Reads the array at `start` of `bytes` (its `[`), at nesting `depth` (as in
    /// ``forEachMember(ofObjectIn:at:depth:_:)``: elements' containers count from it), handing
    /// `body` the offset of each element; `body` reads the element and returns the offset just
    /// after it. Returns the offset just after the array.
    package static func forEachElement(
        ofArrayIn bytes: UnsafeRawBufferPointer, at start: Int, depth: Int, reading body: (Int) throws(JSONError) -> Int
    ) throws(JSONError) -> Int {
        try walk(bytes, at: start, depth: depth, UInt8(ascii: "["), UInt8(ascii: "]"), "expected a JSON array") { scanner throws(JSONError) in
            guard scanner.peek() != nil else { throw scanner.error("expected a JSON value but the text ended") }
            scanner.index = try body(scanner.index)
        }
    }

    /// Decodes a JSON string value given as its raw bytes (quotes included).
    package static func string(_ raw: ArraySlice<UInt8>) throws(JSONError) -> String {
        try scanning(Array(raw)) { scanner throws(JSONError) in try scanner.readWholeString() }
    }

    /// Decodes a JSON string value given as its raw bytes (quotes included).
    package static func string(_ raw: UnsafeRawBufferPointer) throws(JSONError) -> String {
        var scanner = JSONScanner(raw)
        return try scanner.readWholeString()
    }

    private mutating func readWholeString() throws(JSONError) -> String {
        let text = try readString()
        guard index == bytes.count else { throw error("expected a string") }
        return text
    }

    /// Parses `bytes`, exactly one JSON value with optional surrounding white space, into a tree.
    package static func parse(_ bytes: [UInt8]) throws(JSONError) -> JSONValue {
        try scanning(bytes) { scanner throws(JSONError) in
            scanner.skipWhitespace()
            let value = try scanner.readValue()
            scanner.skipWhitespace()
            guard scanner.index == scanner.bytes.count else { throw scanner.error("unexpected text after the JSON value") }
            return value
        }
    }

    private mutating func readValue() throws(JSONError) -> JSONValue {
        guard let byte = peek() else { throw error("expected a JSON value but the text ended") }
        switch byte {
        case UInt8(ascii: "{"):
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else { throw error("the JSON is nested too deeply") }
            index += 1
            var members: [(String, JSONValue)] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                let key = try readString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                members.append((key, try readValue()))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return .object(members)
            }
        case UInt8(ascii: "["):
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else { throw error("the JSON is nested too deeply") }
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try readValue())
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"))
                return .array(elements)
            }
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "t"):
            try skipLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try skipLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try skipLiteral("null")
            return .null
        default:
            let start = index
            try skipNumber()
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if let integer = Int64(text) { return .int(integer) }
            guard let double = Double(text), double.isFinite else {
                throw JSONError(message: "the number is out of range", offset: start)
            }
            return .double(double)
        }
    }

    // MARK: Scanning

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    /// The byte at the scanner's index, nil at the end.
    var peekByte: UInt8? { peek() }

    private func error(_ message: String) -> JSONError { JSONError(message: message, offset: index) }

    private mutating func expect(_ byte: UInt8) throws(JSONError) {
        guard peek() == byte else {
            throw error("expected '\(Character(Unicode.Scalar(byte)))'")
        }
        index += 1
    }

    mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            index += 1
        }
    }

    /// Validates one value starting at `index` and returns its byte range.
    @discardableResult
    mutating func skipValue() throws(JSONError) -> Range<Int> {
        let start = index
        guard let byte = peek() else { throw error("expected a JSON value but the text ended") }
        switch byte {
        case UInt8(ascii: "{"): try skipContainer(close: UInt8(ascii: "}"), isObject: true)
        case UInt8(ascii: "["): try skipContainer(close: UInt8(ascii: "]"), isObject: false)
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try skipLiteral("true")
        case UInt8(ascii: "f"): try skipLiteral("false")
        case UInt8(ascii: "n"): try skipLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber()
        default: throw error("expected a JSON value")
        }
        return start..<index
    }

    private mutating func skipContainer(close: UInt8, isObject: Bool) throws(JSONError) {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw error("the JSON is nested too deeply") }
        index += 1
        skipWhitespace()
        if peek() == close {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            if isObject {
                guard peek() == UInt8(ascii: "\"") else { throw error("expected a string key") }
                try skipString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
            }
            try skipValue()
            skipWhitespace()
            guard let byte = peek() else { throw error("the text ended inside a JSON value") }
            index += 1
            if byte == close { return }
            guard byte == UInt8(ascii: ",") else {
                index -= 1
                throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'")
            }
        }
    }

    private mutating func skipLiteral(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unknown literal") }
        let matches = literal.withUTF8Buffer { expected in
            bytes[index..<(index + count)].elementsEqual(expected)
        }
        guard matches else { throw error("unknown literal") }
        index += count
    }

    private mutating func skipNumber() throws(JSONError) {
        guard let first = peek(), first == UInt8(ascii: "-") || isDigit(first) else { throw error("expected a JSON value") }
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw error("expected a digit") }
        index += 1
        if first != UInt8(ascii: "0") {
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let byte = peek(), isDigit(byte) else { throw error("expected a digit after '.'") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), isDigit(digit) else { throw error("expected a digit in the exponent") }
            while let byte = peek(), isDigit(byte) { index += 1 }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Reads a string value, checking its escapes and its UTF-8, and returns its text.
    mutating func readString() throws(JSONError) -> String {
        // The common case, no escapes: one check of the run, then one String.
        let start = index
        if let end = try skipPlainString() {
            return String(decoding: bytes[(start + 1)..<end], as: UTF8.self)
        }
        index = start
        try expect(UInt8(ascii: "\""))
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun(_ end: Int) throws(JSONError) {
            guard runStart < end else { return }
            guard let text = String(validating: bytes[runStart..<end], as: UTF8.self) else {
                throw JSONError(message: "the string is not valid UTF-8", offset: runStart)
            }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while true {
            guard let byte = peek() else { throw error("the text ended inside a string") }
            switch byte {
            case UInt8(ascii: "\""):
                try flushRun(index)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flushRun(index)
                index += 1
                scalars.append(try readEscape())
                runStart = index
            case 0x00..<0x20:
                throw error("a control character must be escaped in a string")
            default:
                index += 1
            }
        }
    }

    /// Skips a string, checking it, without making it.
    private mutating func skipString() throws(JSONError) {
        let start = index
        if try skipPlainString() == nil {
            index = start
            _ = try readString()
        }
    }

    /// Skips a string without escapes, checking its UTF-8 and that it holds no control character,
    /// and returns the index of its closing quote (the scanner is then past it). Returns nil,
    /// with the scanner anywhere, when the string has an escape.
    private mutating func skipPlainString() throws(JSONError) -> Int? {
        try expect(UInt8(ascii: "\""))
        let start = index
        while true {
            guard let byte = peek() else { throw error("the text ended inside a string") }
            switch byte {
            case UInt8(ascii: "\""):
                guard UTF8Check.isValid(UnsafeRawBufferPointer(rebasing: bytes[start..<index])) else {
                    throw JSONError(message: "the string is not valid UTF-8", offset: start)
                }
                index += 1
                return index - 1
            case UInt8(ascii: "\\"):
                return nil
            case 0x00..<0x20:
                throw error("a control character must be escaped in a string")
            default:
                index += 1
            }
        }
    }

    private mutating func readEscape() throws(JSONError) -> Unicode.Scalar {
        guard let byte = peek() else { throw error("the text ended inside an escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let first = try readHex4()
            if (0xD800..<0xDC00).contains(first) {
                guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("a high surrogate must be followed by a low surrogate")
                }
                index += 2
                let second = try readHex4()
                guard (0xDC00..<0xE000).contains(second) else { throw error("expected a low surrogate") }
                let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else { throw error("invalid surrogate pair") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(first) else { throw error("a lone low surrogate is not a character") }
            return scalar
        default:
            index -= 1
            throw error("unknown escape")
        }
    }

    private mutating func readHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("the text ended inside a \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("expected a hexadecimal digit")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
