import EventStoreCore

/// The one error type of the Commands module: the handler gave up or could not write what was
/// decided. The application's own refusals are the errors its deciders throw, passed through
/// unchanged.
public struct CommandError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; a struct so that codes can be added without breaking a
    /// program's `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        package enum Base: String, Sendable, CaseIterable {
            case conflict, unencodable
        }

        package let base: Base

        package init(_ base: Base) {
            self.base = base
        }

        /// Other writers kept changing the streams: every attempt met a version conflict.
        public static let conflict = Code(.conflict)
        /// A decided event could not be encoded (a number JSON cannot hold); nothing was written.
        public static let unencodable = Code(.unencodable)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// One sentence: what was wrong and what to do.
    public let message: String
    /// How many attempts were made.
    public let attempts: Int
    /// The last failure underneath (the store's version conflict, the encoding error).
    public let underlying: EventStoreError?

    public init(_ code: Code, _ message: String, attempts: Int = 1, underlying: EventStoreError? = nil) {
        self.code = code
        self.message = message
        self.attempts = attempts
        self.underlying = underlying
    }

    public var description: String { message }
}

/// Matches an error against a code in a `catch`: `catch CommandError.Code.conflict`.
public func ~= (code: CommandError.Code, error: any Error) -> Bool {
    (error as? CommandError)?.code == code
}

extension CommandError: CodedError {
    public var codeName: String { code.description }

    /// Other writers kept changing the streams: a conflict (409, exit 65); a decided event that
    /// cannot be encoded is bad input (400, exit 64).
    public var category: ErrorCategory { code == .conflict ? .conflict : .invalidInput }

    public var httpStatus: Int { code == .conflict ? 409 : 400 }
}
