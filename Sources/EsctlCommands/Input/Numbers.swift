import ArgumentParser

/// Reads numbers given on the command line, refusing those outside a range with one sentence
/// that names the range (ArgumentParser's own message only says the value is invalid).
public enum Numbers {
    /// A whole number in `range`, for the option or argument `name`.
    public static func whole(_ name: String, _ range: ClosedRange<Int>) -> @Sendable (String) throws -> Int {
        { text in
            guard let value = Int(text), range.contains(value) else { throw ValidationError(wholeRange(name, range, text)) }
            return value
        }
    }

    /// A position or version (0 or more, or 1 or more) for `name`.
    static func unsigned(_ name: String, from lowest: UInt64 = 0) -> @Sendable (String) throws -> UInt64 {
        { text in
            guard let value = UInt64(text), value >= lowest else {
                throw ValidationError("\(name) takes a whole number of \(lowest) or more; '\(text)' is not one.")
            }
            return value
        }
    }

    /// A number (a fraction allowed) in `range`, for `name`.
    public static func decimal(_ name: String, _ range: ClosedRange<Double>) -> @Sendable (String) throws -> Double {
        { text in
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                if range.upperBound == .greatestFiniteMagnitude {
                    throw ValidationError("\(name) takes a number; '\(text)' is not one.")
                }
                throw ValidationError("\(name) takes a number from \(format(range.lowerBound)) to \(format(range.upperBound)); '\(text)' is not one.")
            }
            return value
        }
    }

    private static func wholeRange(_ name: String, _ range: ClosedRange<Int>, _ text: String) -> String {
        if range == Int.min...Int.max {
            // The command's own rules name the range; this is for text that is no number at all.
            return "\(name) takes a whole number; '\(text)' is not one (or is too large)."
        }
        if range.upperBound == Int.max {
            return "\(name) takes a whole number of \(range.lowerBound) or more; '\(text)' is not one."
        }
        return "\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound); '\(text)' is not one."
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Whether a command-line word is a negative number ("-5", "-1.5"), which ArgumentParser
    /// would take for an option.
    static func isNegativeNumber(_ word: String) -> Bool {
        word.wholeMatch(of: /-[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/) != nil
    }

    /// The arguments read the way a user who typed a negative number meant them: `--name -5`
    /// as `--name=-5`, and a negative number where an argument goes moved after `--` (kept in
    /// order), so the command's own checks can say what the number must be. Nil when there is
    /// nothing to reread (no negative number, or a `--` already).
    static func rereadingNegativeNumbers(_ arguments: [String]) -> [String]? {
        guard !arguments.contains("--"), arguments.contains(where: isNegativeNumber) else { return nil }
        var options: [String] = []
        var positionals: [String] = []
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if isNegativeNumber(word) {
                positionals.append(word)
            } else if word.hasPrefix("--"), !word.contains("="), index + 1 < arguments.count, isNegativeNumber(arguments[index + 1]) {
                options.append(word + "=" + arguments[index + 1])
                index += 1
            } else {
                options.append(word)
            }
            index += 1
        }
        return positionals.isEmpty ? options : options + ["--"] + positionals
    }
}
