import Foundation

/// Why JSON bytes are not the value a type expects: which member, and what it should have been.
public struct JSONDecodingError: Error, Equatable, CustomStringConvertible {
    /// The value's path (`"order"."note"`, `"[2]"`), empty for the whole value.
    public let path: String
    /// What was expected there.
    public let expected: String

    public init(path: String, expected: String) {
        self.path = path
        self.expected = expected
    }

    public var description: String {
        path.isEmpty ? "the data is not \(expected)" : "\(path) is missing or not \(expected)"
    }
}

/// Decodes `Decodable` values straight from JSON bytes, without building a tree or a string per
/// member: the decoder an event's data goes through on every read of a typed event, so it is the
/// fast path of projections and command handlers. Object members are found by their key as
/// written (a key with escapes is compared decoded); numbers are parsed in place.
///
/// Accepts what Codable's synthesized conformances ask of it: objects, arrays, strings, numbers
/// (integers must be whole and in range), booleans and null (a missing member and `null` both
/// decode as nil for an optional).
public enum JSONBytesDecoder {
    /// Decodes `type` from `bytes`, which must be exactly one JSON value.
    ///
    /// Throws ``JSONDecodingError`` naming the member that is missing or of the wrong kind, and
    /// ``JSONError`` when the bytes are not JSON.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        var scanner = JSONScanner(bytes)
        scanner.skipWhitespace()
        let range = try scanner.skipValue()
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw JSONError(message: "unexpected text after the JSON value", offset: scanner.index) }
        return try T(from: ValueDecoder(bytes: bytes, range: range, path: []))
    }

    /// Decodes `type` from `data`.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try data.withUnsafeBytes { try decode(type, from: $0) }
    }
}

/// One JSON value's bytes as a `Decoder`.
private struct ValueDecoder: Decoder {
    let bytes: UnsafeRawBufferPointer
    let range: Range<Int>
    let path: [any CodingKey]

    var codingPath: [any CodingKey] { path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    var value: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard value.first == UInt8(ascii: "{") else { throw mismatch("an object") }
        var members: [(key: Range<Int>, value: Range<Int>)] = []
        let offset = range.lowerBound
        try JSONScanner.forEachMember(ofObject: value) { key, value in
            members.append((key.lowerBound + offset..<key.upperBound + offset, value.lowerBound + offset..<value.upperBound + offset))
        }
        return KeyedDecodingContainer(ObjectContainer<Key>(bytes: bytes, members: members, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard value.first == UInt8(ascii: "[") else { throw mismatch("an array") }
        return ArrayContainer(bytes: bytes, elements: try JSONValues.elements(bytes, range), path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValue(decoder: self)
    }

    func mismatch(_ expected: String) -> JSONDecodingError {
        JSONDecodingError(path: JSONValues.pathText(path), expected: expected)
    }
}

/// The values of one JSON scalar, read in place.
private enum JSONValues {
    static func pathText(_ path: [any CodingKey]) -> String {
        path.map { $0.intValue.map { "[\($0)]" } ?? "\"\($0.stringValue)\"" }.joined(separator: ".")
    }

    /// The byte ranges of an array's elements.
    static func elements(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> [Range<Int>] {
        var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: bytes[range]))
        var elements: [Range<Int>] = []
        scanner.index = 1
        scanner.skipWhitespace()
        if scanner.peekByte == UInt8(ascii: "]") { return elements }
        while true {
            scanner.skipWhitespace()
            let element = try scanner.skipValue()
            elements.append(element.lowerBound + range.lowerBound..<element.upperBound + range.lowerBound)
            scanner.skipWhitespace()
            guard scanner.peekByte == UInt8(ascii: ",") else { return elements }
            scanner.index += 1
        }
    }
}

/// An object's members, found by key.
private struct ObjectContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let bytes: UnsafeRawBufferPointer
    let members: [(key: Range<Int>, value: Range<Int>)]
    let path: [any CodingKey]

    var codingPath: [any CodingKey] { path }

    var allKeys: [Key] {
        members.compactMap { member in JSONFields.string(UnsafeRawBufferPointer(rebasing: bytes[member.key])).flatMap(Key.init(stringValue:)) }
    }

    /// The value range of the member named `key`, if there is one.
    private func find(_ key: Key) -> Range<Int>? {
        let name = key.stringValue
        for member in members {
            let raw = UnsafeRawBufferPointer(rebasing: bytes[member.key])
            let inner = UnsafeRawBufferPointer(rebasing: raw[1..<(raw.count - 1)])
            if inner.contains(UInt8(ascii: "\\")) {
                if JSONFields.string(raw) == name { return member.value }
            } else if inner.elementsEqual(name.utf8) {
                return member.value
            }
        }
        return nil
    }

    private func value(_ key: Key) -> UnsafeRawBufferPointer? {
        find(key).map { UnsafeRawBufferPointer(rebasing: bytes[$0]) }
    }

    private func mismatch(_ key: Key, _ expected: String) -> JSONDecodingError {
        JSONDecodingError(path: JSONValues.pathText(path + [key]), expected: expected)
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let value = value(key) else { return true }
        return JSONFields.isNull(value)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        guard let value = value(key), let result = JSONFields.bool(value) else { throw mismatch(key, "a boolean") }
        return result
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        guard let value = value(key), let result = JSONFields.string(value) else { throw mismatch(key, "a string") }
        return result
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        guard let value = value(key), let result = JSONFields.double(value) else { throw mismatch(key, "a number") }
        return result
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        Float(try decode(Double.self, forKey: key))
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        guard let value = value(key), let result = JSONFields.integer(value, as: T.self) else {
            throw mismatch(key, "a whole number in range")
        }
        return result
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let range = find(key) else { throw mismatch(key, "present") }
        return try T(from: ValueDecoder(bytes: bytes, range: range, path: path + [key]))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        guard let range = find(key) else { throw mismatch(key, "an object") }
        return try ValueDecoder(bytes: bytes, range: range, path: path + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        guard let range = find(key) else { throw mismatch(key, "an array") }
        return try ValueDecoder(bytes: bytes, range: range, path: path + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        throw JSONDecodingError(path: JSONValues.pathText(path), expected: "decodable without a superclass")
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder()
    }
}

/// An array's elements, in order.
private struct ArrayContainer: UnkeyedDecodingContainer {
    let bytes: UnsafeRawBufferPointer
    let elements: [Range<Int>]
    let path: [any CodingKey]
    var currentIndex = 0

    init(bytes: UnsafeRawBufferPointer, elements: [Range<Int>], path: [any CodingKey]) {
        self.bytes = bytes
        self.elements = elements
        self.path = path
    }

    var codingPath: [any CodingKey] { path }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private struct Index: CodingKey {
        let intValue: Int?
        var stringValue: String { String(intValue ?? 0) }
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    private mutating func next(_ expected: String) throws -> ValueDecoder {
        guard !isAtEnd else { throw JSONDecodingError(path: JSONValues.pathText(path + [Index(currentIndex)]), expected: expected) }
        defer { currentIndex += 1 }
        return ValueDecoder(bytes: bytes, range: elements[currentIndex], path: path + [Index(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, JSONFields.isNull(UnsafeRawBufferPointer(rebasing: bytes[elements[currentIndex]])) else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try T(from: try next("a value"))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next("an object").container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next("an array").unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try next("a value")
    }
}

/// One value, as a primitive.
private struct SingleValue: SingleValueDecodingContainer {
    let decoder: ValueDecoder

    var codingPath: [any CodingKey] { decoder.path }

    private func mismatch(_ expected: String) -> JSONDecodingError { decoder.mismatch(expected) }

    func decodeNil() -> Bool { JSONFields.isNull(decoder.value) }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard let result = JSONFields.bool(decoder.value) else { throw mismatch("a boolean") }
        return result
    }

    func decode(_ type: String.Type) throws -> String {
        guard let result = JSONFields.string(decoder.value) else { throw mismatch("a string") }
        return result
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard let result = JSONFields.double(decoder.value) else { throw mismatch("a number") }
        return result
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    private func integer<T: FixedWidthInteger>() throws -> T {
        guard let result = JSONFields.integer(decoder.value, as: T.self) else { throw mismatch("a whole number in range") }
        return result
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try T(from: decoder)
    }
}
