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

    public var description: String {
        switch self {
        case .any: return "any version"
        case .noStream: return "no stream"
        case .streamExists: return "an existing stream"
        case let .exact(version): return "version \(version)"
        }
    }
}
