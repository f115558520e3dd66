/// What the caller expects of a stream's version when appending, the optimistic-concurrency guard.
///
/// Stream versions count from 1: a stream's first event has version 1, and a stream with no
/// events has version 0.
public enum ExpectedVersion: Sendable, Hashable, CustomStringConvertible {
    /// No expectation: append whatever the stream's version is.
    case any
    /// The stream must not exist yet (version 0).
    case noStream
    /// The stream must exist (version 1 or more).
    case streamExists
    /// The stream's version must be exactly this (0 is the same as ``noStream``).
    case exact(UInt64)

    /// Whether a stream at `actual` satisfies this expectation.
    public func isSatisfied(by actual: UInt64) -> Bool {
        switch self {
        case .any: return true
        case .noStream: return actual == 0
        case .streamExists: return actual > 0
        case let .exact(version): return actual == version
        }
    }

    /// The text form: `any`, `no-stream`, `exists` or the version's decimal digits, as esctl's
    /// `--expected-version`, a batch line's `expectedVersion` and HTTP's `Expected-Version` take it.
    public var text: String {
        switch self {
        case .any: return "any"
        case .noStream: return "no-stream"
        case .streamExists: return "exists"
        case let .exact(version): return String(version)
        }
    }

    /// Reads the text form (see ``text``); nil for anything else: a sign, spaces, other words, a
    /// number past 2^64 − 1.
    public init?(text: String) {
        switch text {
        case "any": self = .any
        case "no-stream": self = .noStream
        case "exists": self = .streamExists
        default:
            guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let version = UInt64(text) else {
                return nil
            }
            self = .exact(version)
        }
    }

    /// The one sentence that refuses `text` given as `place` (an option, a header, a field) for
    /// an expected version.
    public static func refusal(of text: String, as place: String) -> String {
        "\(place) takes any, no-stream, exists or a version number of 0 or more; '\(text)' is not one."
    }

    public var description: String {
        switch self {
        case .any: return "any version"
        case .noStream: return "no stream"
        case .streamExists: return "an existing stream"
        case let .exact(version): return "version \(version)"
        }
    }
}
