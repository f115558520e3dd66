#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key of a row in a projection's table: bytes that sort the way their parts do.
///
/// Build keys from parts: a string part is its UTF-8 bytes, with each 0x00 byte written as
/// 0x00 0xFF, followed by 0x00 0x01, so strings sort as strings and a part never runs into the
/// next; a number part is 8 bytes big-endian, so numbers sort as numbers. `docs/FORMAT.md`
/// documents the same encoding for readers in other languages.
public struct RowKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The encoded key.
    public private(set) var bytes: [UInt8]

    /// An empty key (the prefix of every key).
    public init() {
        bytes = []
    }

    /// A key of already encoded bytes.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A key of the parts given, in order: `RowKey(list, itemID)`, `RowKey(warehouse, shelf)`.
    public init<each Part: RowKeyComponent>(_ part: repeat each Part) {
        bytes = []
        repeat (each part).appendKeyPart(to: &self)
    }

    /// Adds a string part.
    public mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append(utf8Bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Adds a string part given as UTF-8 bytes (a slice of a longer string, say).
    public mutating func append(utf8: some Sequence<UInt8>) {
        // Contiguous bytes (most strings, arrays, buffers) are copied at once: this function is
        // generic and not specialized in other modules, so a loop here costs a call per byte.
        if utf8.withContiguousStorageIfAvailable({ append(utf8Bytes: UnsafeRawBufferPointer($0)) }) != nil { return }
        for byte in utf8 {
            bytes.append(byte)
            if byte == 0 { bytes.append(0xFF) }
        }
        bytes.append(0)
        bytes.append(1)
    }

    /// Adds a string part given as UTF-8 bytes in place (an event's stream name, say).
    public mutating func append(utf8Bytes raw: UnsafeRawBufferPointer) {
        if raw.contains(0) {
            for byte in raw {
                bytes.append(byte)
                if byte == 0 { bytes.append(0xFF) }
            }
        } else {
            bytes.append(contentsOf: raw)
        }
        bytes.append(0)
        bytes.append(1)
    }

    /// Adds an unsigned number part.
    public mutating func append(_ number: UInt64) {
        withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Adds a signed number part (its sign bit flipped, so negative numbers sort first).
    public mutating func append(_ number: Int) {
        append(UInt64(bitPattern: Int64(number)) ^ (1 << 63))
    }

    /// This key with a part added.
    public func appending<Part: RowKeyComponent>(_ part: Part) -> RowKey {
        var key = self
        part.appendKeyPart(to: &key)
        return key
    }

    /// The key's parts read back as the given types, in order: `key.decode(String.self, Int.self)`.
    /// Nil when the key does not have exactly that shape.
    public func decode<each Part: RowKeyComponent>(_ type: repeat (each Part).Type) -> (repeat each Part)? {
        let cursor = RowKeyCursor(bytes)
        do {
            let parts = (repeat try (each type).readKeyPart(cursor))
            return cursor.isAtEnd ? parts : nil
        } catch {
            return nil
        }
    }

    /// Whether this key starts with the parts of `prefix`.
    public func hasPrefix(_ prefix: RowKey) -> Bool {
        bytes.starts(with: prefix.bytes)
    }

    /// Reads the parts back, given their kinds in order (for keys whose shape is known only at
    /// run time; ``decode(_:)`` is the typed way); nil when the key does not have that shape.
    public func parts(_ kinds: [RowKeyPart]) -> [RowKeyValue]? {
        let cursor = RowKeyCursor(bytes)
        var values: [RowKeyValue] = []
        do {
            for kind in kinds {
                switch kind {
                case .number: values.append(.number(try UInt64.readKeyPart(cursor)))
                case .string: values.append(.string(try String.readKeyPart(cursor)))
                }
            }
        } catch {
            return nil
        }
        return cursor.isAtEnd ? values : nil
    }

    /// Hashes the bytes in one piece (an array of bytes would feed them one by one).
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func == (lhs: RowKey, rhs: RowKey) -> Bool {
        lhs.bytes == rhs.bytes
    }

    public static func < (lhs: RowKey, rhs: RowKey) -> Bool {
        precedes(lhs.bytes, rhs.bytes)
    }

    /// Whether `lhs` sorts before `rhs` byte by byte (a shorter key first when one is the
    /// other's prefix), as LMDB orders keys.
    public static func precedes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                let common = min(left.count, right.count)
                if common > 0, let l = left.baseAddress, let r = right.baseAddress {
                    let order = memcmp(l, r, common)
                    if order != 0 { return order < 0 }
                }
                return left.count < right.count
            }
        }
    }

    public var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

/// The kind of one part of a ``RowKey``.
public enum RowKeyPart: Sendable {
    case string
    case number
}

/// One part of a ``RowKey``, read back.
public enum RowKeyValue: Sendable, Equatable {
    case string(String)
    case number(UInt64)

    /// The text of a string part.
    public var string: String? {
        if case let .string(value) = self { return value }
        return nil
    }

    /// The value of a number part.
    public var number: UInt64? {
        if case let .number(value) = self { return value }
        return nil
    }
}

/// A type that can be a part of a ``RowKey``: `String`, `UInt64` and `Int` are. Parts sort as
/// their values do (`docs/FORMAT.md` gives the bytes).
public protocol RowKeyComponent: Sendable {
    /// Adds this value to `key` as its next part.
    func appendKeyPart(to key: inout RowKey)
    /// Reads a part of this type at the cursor and moves past it; throws ``RowKeyShapeError``
    /// when the bytes there are not one.
    static func readKeyPart(_ cursor: RowKeyCursor) throws(RowKeyShapeError) -> Self
}

/// A key's bytes do not hold the parts asked for.
public struct RowKeyShapeError: Error, Sendable {}

/// A position in a key's bytes, moved forward as parts are read.
public final class RowKeyCursor {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { index == bytes.count }

    /// The next 8 bytes as a big-endian number.
    func readNumber() throws(RowKeyShapeError) -> UInt64 {
        guard index + 8 <= bytes.count else { throw RowKeyShapeError() }
        defer { index += 8 }
        return bytes[index..<(index + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The next string part's UTF-8 bytes, unescaped, through its terminator.
    func readString() throws(RowKeyShapeError) -> String {
        var text: [UInt8] = []
        while true {
            guard index + 1 < bytes.count else { throw RowKeyShapeError() }
            if bytes[index] == 0 {
                if bytes[index + 1] == 1 {
                    index += 2
                    break
                }
                guard bytes[index + 1] == 0xFF else { throw RowKeyShapeError() }
                text.append(0)
                index += 2
            } else {
                text.append(bytes[index])
                index += 1
            }
        }
        guard let string = String(validating: text, as: UTF8.self) else { throw RowKeyShapeError() }
        return string
    }
}

extension String: RowKeyComponent {
    public func appendKeyPart(to key: inout RowKey) { key.append(self) }
    public static func readKeyPart(_ cursor: RowKeyCursor) throws(RowKeyShapeError) -> String { try cursor.readString() }
}

extension UInt64: RowKeyComponent {
    public func appendKeyPart(to key: inout RowKey) { key.append(self) }
    public static func readKeyPart(_ cursor: RowKeyCursor) throws(RowKeyShapeError) -> UInt64 { try cursor.readNumber() }
}

extension Int: RowKeyComponent {
    public func appendKeyPart(to key: inout RowKey) { key.append(self) }
    public static func readKeyPart(_ cursor: RowKeyCursor) throws(RowKeyShapeError) -> Int {
        Int(truncatingIfNeeded: Int64(bitPattern: try cursor.readNumber() ^ (1 << 63)))
    }
}
