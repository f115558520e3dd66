/// Text from the log made safe to show on a terminal: a chat message or a name must not be able
/// to move the cursor, recolour or rewrite the screen, or reverse the text around it. Control
/// characters (C0, DEL, C1), line and paragraph separators and the bidirectional overrides and
/// isolates are shown as escapes (`\n`, `\u{1B}`, `\u{202E}`). `--json` output is never passed
/// through this: it stays exact JSON.
public enum TerminalText {
    /// `text` with every unsafe character escaped; the same string when there is none.
    public static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    /// Whether a character can change what a terminal shows beyond itself.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F: return true  // C0 controls, DEL, C1 controls (ESC, CSI, BEL, CR, ...)
        case 0x2028, 0x2029: return true  // line and paragraph separators
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true  // bidi marks, embeddings, overrides, isolates
        default: return false
        }
    }
}
