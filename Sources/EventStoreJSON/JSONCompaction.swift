extension JSONScanner {
    /// Whether `bytes` hold white space outside of JSON strings: what compaction would remove,
    /// were the bytes JSON. One pass, no validation (bytes that are not JSON may say yes).
    package static func hasWhitespaceOutsideStrings(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Most data holds no white space at all: eight bytes at a time tell that cheaply.
        guard hasWhitespace(bytes) else { return false }
        var found = false
        forEachByteOutsideStrings(bytes) { byte in
            guard isWhitespace(byte) else { return true }
            found = true
            return false
        }
        return found
    }

    /// `bytes` without the white space outside strings when they are exactly one JSON value
    /// (strings, numbers and member order as written); nil when they are not JSON.
    package static func compacted(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        do {
            try validate(bytes)
        } catch {
            return nil
        }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        forEachByteOutsideStrings(bytes, inside: { result.append($0) }) { byte in
            if !isWhitespace(byte) { result.append(byte) }
            return true
        }
        return result
    }

    /// Whether any byte is white space, eight bytes a step (the classic test for a zero byte in
    /// a word, on the word XORed with each white-space byte repeated).
    private static func hasWhitespace(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if hasZeroByte(word ^ (ones &* 0x20)) || hasZeroByte(word ^ (ones &* 0x0A)) || hasZeroByte(word ^ (ones &* 0x0D))
                || hasZeroByte(word ^ (ones &* 0x09))
            {
                return true
            }
            index += 8
        }
        while index < bytes.count {
            if isWhitespace(bytes[index]) { return true }
            index += 1
        }
        return false
    }

    @inline(__always)
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Walks `bytes`, telling strings (quotes and escapes included, to `inside`) from the rest
    /// (to `outside`, until it returns false).
    @inline(__always)
    private static func forEachByteOutsideStrings(
        _ bytes: UnsafeRawBufferPointer, inside: (UInt8) -> Void = { _ in }, outside: (UInt8) -> Bool
    ) {
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                inside(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
                inside(byte)
            } else if !outside(byte) {
                return
            }
        }
    }
}
