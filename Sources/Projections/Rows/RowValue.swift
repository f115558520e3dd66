import Foundation

/// A value a projection keeps in a table row, with a canonical encoding: the same value always
/// gives the same bytes, which is what makes a rebuilt state byte-identical to the live one.
///
/// Conform by writing fields in a fixed order with ``RowWriter`` and reading them back in the same
/// order with ``RowReader``; numbers, strings, booleans, optionals and arrays are built in.
/// A `Codable` type gets this encoding from its `Codable` conformance: declare `RowValue` and
/// nothing more (see `RowCoding`).
public protocol RowValue: Sendable {
    /// Writes the value's fields, always in the same order.
    func encode(to writer: inout RowWriter)
    /// Reads the fields back in the order `encode` wrote them; throws ``RowDecodingError`` when
    /// the bytes run out or hold something else.
    init(from reader: inout RowReader) throws(RowDecodingError)
}

extension RowValue {
    /// The value's canonical bytes.
    public var encoded: [UInt8] {
        var writer = RowWriter()
        encode(to: &writer)
        return writer.bytes
    }

    /// Decodes a value from bytes, which must hold exactly one.
    public init(decoding bytes: some Collection<UInt8>) throws(RowDecodingError) {
        var reader = RowReader(Array(bytes))
        self = try Self(from: &reader)
        guard reader.isAtEnd else { throw RowDecodingError("\(bytes.count - reader.offset) bytes are left after a \(Self.self)") }
    }
}

/// Stored bytes that are not the value they should be.
public struct RowDecodingError: Error, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Writes the canonical row encoding: integers as 8 bytes big-endian (two's complement when
/// signed), doubles as their 8-byte IEEE 754 bit pattern big-endian, booleans as one byte 0 or 1,
/// strings and byte strings as a 4-byte big-endian length and the bytes, optionals as one byte
/// 0 (none) or 1 followed by the value, arrays as a 4-byte big-endian count and the elements.
public struct RowWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []
    /// Why a value could not be written (a `Codable` conformance that threw), when one could
    /// not: the runner refuses to store such a row instead of storing part of it.
    public private(set) var failure: String?

    public init() {}

    /// Marks the row as not written, saying why: the runner stops the projection on it.
    public mutating func fail(_ reason: String) {
        if failure == nil { failure = reason }
    }

    public mutating func write(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func write(_ value: Int64) { write(UInt64(bitPattern: value)) }
    public mutating func write(_ value: Int) { write(Int64(value)) }
    public mutating func write(_ value: Bool) { bytes.append(value ? 1 : 0) }

    public mutating func write(_ value: Double) {
        // One NaN, so equal states give equal bytes.
        write(value.isNaN ? Double.nan.bitPattern : value.bitPattern)
    }

    public mutating func write(_ value: String) {
        write(length: value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    public mutating func write(bytes value: some Collection<UInt8>) {
        write(length: value.count)
        bytes.append(contentsOf: value)
    }

    public mutating func write<V: RowValue>(_ value: V?) {
        guard let value else {
            bytes.append(0)
            return
        }
        bytes.append(1)
        value.encode(to: &self)
    }

    public mutating func write<V: RowValue>(_ values: [V]) {
        write(length: values.count)
        for value in values { value.encode(to: &self) }
    }

    private mutating func write(length: Int) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: length).bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Writes an array's count (for encoders that learn it as they go: see ``patchCount(_:at:)``).
    mutating func writeCount(_ count: Int) { write(length: count) }

    /// Overwrites the count written at `offset` by ``writeCount(_:)``.
    mutating func patchCount(_ count: Int, at offset: Int) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).bigEndian) { counted in
            for index in 0..<4 { bytes[offset + index] = counted[index] }
        }
    }
}

/// Reads the encoding ``RowWriter`` writes, checking every length against what is left.
public struct RowReader {
    private let bytes: [UInt8]
    /// How many bytes have been read.
    public private(set) var offset = 0

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == bytes.count }

    private mutating func take(_ count: Int) throws(RowDecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - offset else {
            throw RowDecodingError("a row ends after \(bytes.count) bytes, but \(offset + count) are needed")
        }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    public mutating func read(_: UInt64.Type = UInt64.self) throws(RowDecodingError) -> UInt64 {
        try take(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    public mutating func read(_: Int64.Type) throws(RowDecodingError) -> Int64 {
        Int64(bitPattern: try read(UInt64.self))
    }

    public mutating func read(_: Int.Type) throws(RowDecodingError) -> Int {
        Int(try read(Int64.self))
    }

    public mutating func read(_: Bool.Type) throws(RowDecodingError) -> Bool {
        switch try take(1).first {
        case 0: return false
        case 1: return true
        default: throw RowDecodingError("a boolean is neither 0 nor 1")
        }
    }

    public mutating func read(_: Double.Type) throws(RowDecodingError) -> Double {
        Double(bitPattern: try read(UInt64.self))
    }

    public mutating func read(_: String.Type) throws(RowDecodingError) -> String {
        let count = try readLength()
        guard let text = String(validating: try take(count), as: UTF8.self) else {
            throw RowDecodingError("a string is not valid UTF-8")
        }
        return text
    }

    public mutating func readBytes() throws(RowDecodingError) -> [UInt8] {
        Array(try take(try readLength()))
    }

    public mutating func read<V: RowValue>(_: V?.Type) throws(RowDecodingError) -> V? {
        switch try take(1).first {
        case 0: return nil
        case 1: return try V(from: &self)
        default: throw RowDecodingError("an optional's marker is neither 0 nor 1")
        }
    }

    public mutating func read<V: RowValue>(_: [V].Type) throws(RowDecodingError) -> [V] {
        let count = try readLength()
        // Each element takes at least one byte: a count larger than what is left is damage.
        guard count <= bytes.count - offset else { throw RowDecodingError("an array claims \(count) elements") }
        var values: [V] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try V(from: &self)) }
        return values
    }

    private mutating func readLength() throws(RowDecodingError) -> Int {
        Int(try take(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// Reads an array's count.
    mutating func readCount() throws(RowDecodingError) -> Int { try readLength() }
}

extension UInt64: RowValue {
    public func encode(to writer: inout RowWriter) { writer.write(self) }
    public init(from reader: inout RowReader) throws(RowDecodingError) { self = try reader.read(UInt64.self) }
}

extension Int64: RowValue {
    public func encode(to writer: inout RowWriter) { writer.write(self) }
    public init(from reader: inout RowReader) throws(RowDecodingError) { self = try reader.read(Int64.self) }
}

extension Int: RowValue {
    public func encode(to writer: inout RowWriter) { writer.write(self) }
    public init(from reader: inout RowReader) throws(RowDecodingError) { self = try reader.read(Int.self) }
}

extension Bool: RowValue {
    public func encode(to writer: inout RowWriter) { writer.write(self) }
    public init(from reader: inout RowReader) throws(RowDecodingError) { self = try reader.read(Bool.self) }
}

extension Double: RowValue {
    public func encode(to writer: inout RowWriter) { writer.write(self) }
    public init(from reader: inout RowReader) throws(RowDecodingError) { self = try reader.read(Double.self) }
}

extension String: RowValue {
    public func encode(to writer: inout RowWriter) { writer.write(self) }
    public init(from reader: inout RowReader) throws(RowDecodingError) { self = try reader.read(String.self) }
}

extension Array: RowValue where Element: RowValue {
    public func encode(to writer: inout RowWriter) { writer.write(self) }
    public init(from reader: inout RowReader) throws(RowDecodingError) { self = try reader.read([Element].self) }
}

extension Optional: RowValue where Wrapped: RowValue {
    public func encode(to writer: inout RowWriter) { writer.write(self) }
    public init(from reader: inout RowReader) throws(RowDecodingError) { self = try reader.read(Wrapped?.self) }
}
