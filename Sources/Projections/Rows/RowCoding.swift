import Foundation

/// A `Codable` type is a ``RowValue`` by declaring it: its canonical row encoding is derived from
/// its `Codable` conformance, fields in the order it encodes them (the declaration order, for a
/// synthesized conformance), in the formats ``RowWriter`` documents: integers as 8 bytes, doubles
/// as their bit pattern, booleans as one byte, strings and `Data` with a length, `UUID`s as their
/// 16 bytes, optionals with a 0/1 marker, arrays with a count. Keys are not stored: the order is.
///
/// > Important: Only conformances that encode the same fields in the same order every time can
/// > be rows (synthesized ones do). An enum with associated values, whose synthesized coding
/// > depends on keys, cannot.
extension RowValue where Self: Codable {
    public func encode(to writer: inout RowWriter) {
        let buffer = RowBuffer(taking: &writer)
        do {
            try encode(to: RowEncoder(buffer: buffer))
        } catch {
            // Writing into bytes cannot fail for the types rows are made of; a conformance that
            // throws (a custom one, or a shape rows cannot hold) marks the row, and the runner
            // stops the projection on it rather than store part of a row.
            buffer.writer.fail("a \(Self.self) cannot be written as a row: \(error)")
        }
        writer = buffer.writer
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        let source = RowSource(reader)
        do {
            self = try Self(from: RowDecoder(source: source))
        } catch let error as RowDecodingError {
            throw error
        } catch {
            throw RowDecodingError("\(Self.self): \(error)")
        }
        reader = source.reader
    }
}

/// The writer shared by the containers of one encoding.
private final class RowBuffer {
    var writer: RowWriter

    /// Takes the caller's writer (leaving it empty until it is given back), so its bytes have one
    /// owner and appending never copies them.
    init(taking writer: inout RowWriter) {
        self.writer = writer
        writer = RowWriter()
    }
}

/// The reader shared by the containers of one decoding.
private final class RowSource {
    var reader: RowReader
    init(_ reader: RowReader) { self.reader = reader }
}

/// Optionals, told apart from their wrapped values (which encode the same through a single
/// value container), so they get their marker wherever they appear.
private protocol OptionalRow {
    var wrappedValue: (any Encodable)? { get }
    static func decodeRow(_ decoder: RowDecoder) throws -> Self
}

extension Optional: OptionalRow where Wrapped: Codable {
    fileprivate var wrappedValue: (any Encodable)? { self }

    fileprivate static func decodeRow(_ decoder: RowDecoder) throws -> Self {
        let marker = try decoder.source.reader.read(Bool.self)
        return marker ? try decoder.decodeValue(Wrapped.self) : nil
    }
}

private struct RowEncoder: Encoder {
    let buffer: RowBuffer
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(FieldsEncoder<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        ElementsEncoder(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ValueEncoder(encoder: self)
    }

    /// Writes any value: the special cases first, then its own conformance.
    func encodeValue<T: Encodable>(_ value: T) throws {
        if let optional = value as? any OptionalRow {
            guard let wrapped = optional.wrappedValue else {
                buffer.writer.write(false)
                return
            }
            buffer.writer.write(true)
            try encodeValue(wrapped)
            return
        }
        switch value {
        case let value as String: buffer.writer.write(value)
        case let value as Double: buffer.writer.write(value)
        case let value as Float: buffer.writer.write(Double(value))
        case let value as Bool: buffer.writer.write(value)
        case let value as UInt64: buffer.writer.write(value)
        case let value as UInt: buffer.writer.write(UInt64(value))
        case let value as any FixedWidthInteger: buffer.writer.write(Int64(truncatingIfNeeded: value))
        case let value as Data: buffer.writer.write(bytes: value)
        case let value as UUID: withUnsafeBytes(of: value.uuid) { buffer.writer.write(bytes: $0) }
        case let value as any RowValue:
            // A type's own row encoding wins over its Codable one (a date kept as a day number
            // in rows and as text in JSON).
            value.encode(to: &buffer.writer)
        default: try value.encode(to: self)
        }
    }
}

private struct FieldsEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { encoder.buffer.writer.write(false) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try encoder.encodeValue(value) }

    // Optionals keep their place with a marker (synthesized conformances would skip a nil).
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encoder.encodeValue(value) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encoder.encodeValue(value) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encoder.encodeValue(value) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encoder.encodeValue(value.map(Double.init)) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encoder.encodeValue(value) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encoder.encodeValue(value.map(Int.init)) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encoder.encodeValue(value.map(Int.init)) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encoder.encodeValue(value.map(Int.init)) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encoder.encodeValue(value) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encoder.encodeValue(value.map(UInt64.init)) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encoder.encodeValue(value.map(UInt64.init)) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encoder.encodeValue(value.map(UInt64.init)) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encoder.encodeValue(value.map(UInt64.init)) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encoder.encodeValue(value) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return encoder.buffer.writer.write(false) }
        encoder.buffer.writer.write(true)
        try encoder.encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { encoder.unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}

/// An array: its count first (patched as elements arrive, since Codable never says how many).
private struct ElementsEncoder: UnkeyedEncodingContainer {
    let encoder: RowEncoder
    private let countOffset: Int
    private(set) var count = 0
    var codingPath: [any CodingKey] { [] }

    init(encoder: RowEncoder) {
        self.encoder = encoder
        countOffset = encoder.buffer.writer.bytes.count
        encoder.buffer.writer.writeCount(0)
    }

    /// One more element is (about to be) written.
    private mutating func countOne() {
        count += 1
        encoder.buffer.writer.patchCount(count, at: countOffset)
    }

    mutating func encodeNil() throws {
        countOne()
        encoder.buffer.writer.write(false)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        countOne()
        try encoder.encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        countOne()
        return encoder.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        countOne()
        return encoder.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { encoder }
}

private struct ValueEncoder: SingleValueEncodingContainer {
    let encoder: RowEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { encoder.buffer.writer.write(false) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeValue(value) }
}

fileprivate struct RowDecoder: Decoder {
    let source: RowSource
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(FieldsDecoder<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        ElementsDecoder(decoder: self, count: try source.reader.readCount())
    }

    func singleValueContainer() -> any SingleValueDecodingContainer {
        ValueDecoder(decoder: self)
    }

    /// Reads any value, as ``RowEncoder/encodeValue(_:)`` wrote it.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        let value: Any
        if let optional = T.self as? any OptionalRow.Type {
            value = try optional.decodeRow(self)
        } else if type == String.self {
            value = try source.reader.read(String.self)
        } else if type == Double.self {
            value = try source.reader.read(Double.self)
        } else if type == Float.self {
            value = Float(try source.reader.read(Double.self))
        } else if type == Bool.self {
            value = try source.reader.read(Bool.self)
        } else if type == UInt64.self {
            value = try source.reader.read(UInt64.self)
        } else if type == UInt.self {
            value = UInt(try source.reader.read(UInt64.self))
        } else if let integer = T.self as? any FixedWidthInteger.Type {
            value = try self.integer(integer)
        } else if type == Data.self {
            value = Data(try source.reader.readBytes())
        } else if type == UUID.self {
            let bytes = try source.reader.readBytes()
            guard bytes.count == 16 else { throw RowDecodingError("a UUID is not 16 bytes") }
            value = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        } else if let rowType = T.self as? any RowValue.Type {
            value = try rowType.init(from: &source.reader)
        } else {
            return try T(from: self)
        }
        guard let typed = value as? T else { throw RowDecodingError("a row read a \(Swift.type(of: value)) where a \(T.self) belongs") }
        return typed
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let value = try source.reader.read(Int64.self)
        guard let exact = T(exactly: value) else { throw RowDecodingError("\(value) does not fit a \(T.self)") }
        return exact
    }
}

private struct FieldsDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RowDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { try !decoder.source.reader.read(Bool.self) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder.decodeValue(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder.integer(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder.integer(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder.integer(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder.integer(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder.integer(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder.integer(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder.integer(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decoder.source.reader.read(Double.self)) }

    // Every optional was written with its marker: read it, whatever the type.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try decoder.decodeValue(T?.self) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try decoder.decodeValue(Bool?.self) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try decoder.decodeValue(String?.self) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try decoder.decodeValue(Double?.self) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try decoder.decodeValue(Int?.self) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try decoder.decodeValue(Int64?.self) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try decoder.decodeValue(UInt64?.self) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        decoder.container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try decoder.unkeyedContainer() }
    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
}

private struct ElementsDecoder: UnkeyedDecodingContainer {
    let decoder: RowDecoder
    let count: Int?
    var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    init(decoder: RowDecoder, count: Int) {
        self.decoder = decoder
        self.count = count
    }

    private mutating func next() throws {
        guard !isAtEnd else { throw RowDecodingError("an array has fewer elements than were read") }
        currentIndex += 1
    }

    mutating func decodeNil() throws -> Bool {
        // Only optionals write a marker, and they are read through decodeValue.
        false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next()
        return try decoder.decodeValue(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next()
        return decoder.container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next()
        return try decoder.unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { decoder }
}

private struct ValueDecoder: SingleValueDecodingContainer {
    let decoder: RowDecoder
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(type) }
    func decode(_ type: Float.Type) throws -> Float { Float(try decoder.source.reader.read(Double.self)) }
}
