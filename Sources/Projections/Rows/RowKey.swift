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

    /// A key of one string part.
    public init(_ string: String) {
        bytes = []
        append(string)
    }

    /// A key of one number part.
    public init(_ number: UInt64) {
        bytes = []
        append(number)
    }

    /// Adds a string part.
    public mutating func append(_ string: String) {
        append(utf8: string.utf8)
    }

    /// Adds a string part given as UTF-8 bytes (a slice of a longer string, say).
    public mutating func append(utf8: some Sequence<UInt8>) {
        for byte in utf8 {
            bytes.append(byte)
            if byte == 0 { bytes.append(0xFF) }
        }
        bytes.append(0)
        bytes.append(1)
    }

    /// Adds a number part.
    public mutating func append(_ number: UInt64) {
        withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// This key with a string part added.
    public func appending(_ string: String) -> RowKey {
        var key = self
        key.append(string)
        return key
    }

    /// This key with a number part added.
    public func appending(_ number: UInt64) -> RowKey {
        var key = self
        key.append(number)
        return key
    }

    /// Whether this key starts with the parts of `prefix`.
    public func hasPrefix(_ prefix: RowKey) -> Bool {
        bytes.starts(with: prefix.bytes)
    }

    /// Reads the parts back, given their kinds in order; nil when the key does not have that shape.
    public func parts(_ kinds: [RowKeyPart]) -> [RowKeyValue]? {
        var index = 0
        var values: [RowKeyValue] = []
        for kind in kinds {
            switch kind {
            case .number:
                guard index + 8 <= bytes.count else { return nil }
                values.append(.number(bytes[index..<(index + 8)].reduce(0) { $0 << 8 | UInt64($1) }))
                index += 8
            case .string:
                var text: [UInt8] = []
                while true {
                    guard index + 1 < bytes.count else { return nil }
                    if bytes[index] == 0 {
                        if bytes[index + 1] == 1 {
                            index += 2
                            break
                        }
                        guard bytes[index + 1] == 0xFF else { return nil }
                        text.append(0)
                        index += 2
                    } else {
                        text.append(bytes[index])
                        index += 1
                    }
                }
                guard let string = String(validating: text, as: UTF8.self) else { return nil }
                values.append(.string(string))
            }
        }
        return index == bytes.count ? values : nil
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
