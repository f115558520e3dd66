/// What kind of failure an error is, whatever its type: the kinds a caller acts on differently,
/// each with the exit code a command-line tool exits with (sysexits(3) where one fits; esctl's
/// exit-code table is this list, with success and the signals).
public enum ErrorCategory: String, Sendable, CaseIterable {
    /// A domain rule refused the command (or recorded it as invalid). Exit 1.
    case rejected
    /// The command line or the input was invalid. Exit 64.
    case invalidInput
    /// An expected version, a tracking position or an append's condition did not hold. Exit 65.
    case conflict
    /// An event id is already recorded with other content. Exit 66.
    case idempotencyConflict
    /// Something named does not exist (a stream, a projection, a group). Exit 67.
    case notFound
    /// The store cannot be opened or used, or is damaged. Exit 69.
    case unavailable
    /// An unexpected internal failure. Exit 70.
    case internalFailure
    /// A wait ran out of time. Exit 75.
    case timedOut

    /// The exit code a command-line tool exits with for an error of this category.
    public var exitCode: Int32 {
        switch self {
        case .rejected: return 1
        case .invalidInput: return 64
        case .conflict: return 65
        case .idempotencyConflict: return 66
        case .notFound: return 67
        case .unavailable: return 69
        case .internalFailure: return 70
        case .timedOut: return 75
        }
    }
}
