/// Header values as the guards compare them, without Foundation: its `trimmingCharacters(in:)`
/// bridges through `NSString` and cost a few percent of every request's CPU.
enum HeaderText {
    /// `text` without leading and trailing whitespace (tabs and Unicode's space separators, the
    /// set Foundation's `CharacterSet.whitespaces` holds), lowercased.
    static func trimmedLowercased(_ text: Substring) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isWhitespace($0) }),
            let last = scalars.lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        return String(scalars[first...last]).lowercased()
    }

    /// Whether `scalar` is a tab or a space separator (general category Zs).
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar == " " || scalar == "\t" }
        return scalar.properties.generalCategory == .spaceSeparator
    }
}
