#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The members and scalars of JSON bytes read in place, for decoders written by hand (see
/// `TypedProjection`): no tree, no `Decoder`, no string made for a key. Each scalar reader
/// accepts exactly what ``JSONBytesDecoder`` accepts for its type (which uses them), so a decoder
/// that takes only what these return decodes as `Decodable` does, and can leave the rest to it.
public enum JSONFields {
    /// Hands each member of the one JSON object `bytes` holds to `body`: the key's bytes between
    /// its quotes as written (see ``keyHasEscapes(_:)``), and the value's bytes. False, having
    /// stopped, when the bytes are not one valid object.
    public static func forEachMember(
        ofObject bytes: UnsafeRawBufferPointer, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void
    ) -> Bool {
        do {
            try JSONScanner.forEachMember(ofObject: bytes, countingTheObject: true) { key, value in
                body(UnsafeRawBufferPointer(rebasing: bytes[(key.lowerBound + 1)..<(key.upperBound - 1)]), UnsafeRawBufferPointer(rebasing: bytes[value]))
            }
            return true
        } catch {
            return false
        }
    }

    /// Whether a key as ``forEachMember(ofObject:_:)`` hands it holds an escape (`\`): then its
    /// bytes are not its name, and a hand-written decoder should leave the data to `Decodable`.
    @inlinable
    public static func keyHasEscapes(_ key: UnsafeRawBufferPointer) -> Bool {
        key.contains(UInt8(ascii: "\\"))
    }

    /// Whether the value is `null`.
    public static func isNull(_ value: UnsafeRawBufferPointer) -> Bool { value.elementsEqual("null".utf8) }

    /// The string a value holds (escapes decoded); nil when it is no string.
    public static func string(_ value: UnsafeRawBufferPointer) -> String? {
        guard value.count >= 2, value.first == UInt8(ascii: "\"") else { return nil }
        if !value.contains(UInt8(ascii: "\\")) {
            // Validated UTF-8 without escapes: the bytes between the quotes are the text.
            return String(decoding: UnsafeRawBufferPointer(rebasing: value[1..<(value.count - 1)]), as: UTF8.self)
        }
        return try? JSONScanner.string(value)
    }

    /// The boolean a value holds; nil when it is neither `true` nor `false`.
    public static func bool(_ value: UnsafeRawBufferPointer) -> Bool? {
        if value.elementsEqual("true".utf8) { return true }
        if value.elementsEqual("false".utf8) { return false }
        return nil
    }

    /// A whole number in range of `T`, written without fraction or exponent; nil otherwise.
    public static func integer<T: FixedWidthInteger>(_ value: UnsafeRawBufferPointer, as: T.Type = T.self) -> T? {
        guard !value.isEmpty else { return nil }
        var index = 0
        let negative = value[0] == UInt8(ascii: "-")
        if negative {
            guard T.isSigned else { return nil }
            index = 1
        }
        guard index < value.count else { return nil }
        var result: T = 0
        while index < value.count {
            let digit = value[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? times.subtractingReportingOverflow(T(digit)) : times.addingReportingOverflow(T(digit))
            guard !overflow1, !overflow2 else { return nil }
            result = next
            index += 1
        }
        return result
    }

    /// A finite number; nil for anything else (or a number of 64 bytes or more).
    public static func double(_ value: UnsafeRawBufferPointer) -> Double? {
        guard let first = value.first, first == UInt8(ascii: "-") || (first >= 48 && first <= 57), value.count < 64 else {
            return nil
        }
        // strtod on a NUL-terminated copy on the stack: no String made for a number.
        let parsed: Double? = withUnsafeTemporaryAllocation(of: CChar.self, capacity: value.count + 1) { buffer in
            guard let base = buffer.baseAddress else { return nil }
            for index in 0..<value.count { base[index] = CChar(bitPattern: value[index]) }
            base[value.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let number = strtod(base, &end)
            guard end == base + value.count else { return nil }
            return number
        }
        guard let parsed, parsed.isFinite else { return nil }
        return parsed
    }
}
