import Foundation

/// JSON text for single values.
package enum JSONWriter {
    /// `text` as a JSON string literal, escaping quotes, backslashes and control characters.
    package static func quote(_ text: String) -> String {
        // Most text needs no escape: copied whole, not scalar by scalar. 0xE2 leads U+2028 and
        // U+2029 (and other characters, which the slow path copies as they are).
        if !text.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 || $0 == 0x7F || $0 == 0xE2 }) {
            return "\"" + text + "\""
        }
        var result = "\""
        result.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case "\u{00}"..."\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}":
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        result += "\""
        return result
    }

    /// A finite double in the shortest text that reads back as the same double; integral values
    /// print without a fraction ("12", not "12.0"). Infinities and NaN, which JSON cannot hold,
    /// print as null.
    package static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Stored bytes as a JSON value for output: the JSON itself, compact (white space outside
    /// strings removed, which keeps it on one line), when the bytes are valid JSON; otherwise nil.
    package static func embeddable(_ data: Data) -> String? {
        data.withUnsafeBytes { JSONScanner.compacted($0) }.map { String(decoding: $0, as: UTF8.self) }
    }
}
