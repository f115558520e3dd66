/// Bytes as lower-case hexadecimal, two digits a byte (subjects' key ids, state hashes, scratch
/// directories' names): written out, not with `String(format:)`, which makes a formatted string
/// per byte (11 % of a fill of sealed events' samples when key ids were written so).
package enum HexText {
    /// `bytes` as lower-case hex digits.
    package static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let digits = Array("0123456789abcdef".utf8)
}
