import EventStoreCore

/// The one error type of the ConsumerGroups module: a code a program can switch on and one
/// sentence saying what was wrong and what to do. Errors of the store pass through unchanged.
public struct ConsumerGroupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; a struct so that codes can be added without breaking a
    /// program's `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        package enum Base: String, Sendable, CaseIterable {
            case invalidInput, notFound, alreadyExists, leaseLost, alreadySettled
        }

        package let base: Base

        package init(_ base: Base) {
            self.base = base
        }

        /// A name, option or definition broke a rule. Nothing was written.
        public static let invalidInput = Code(.invalidInput)
        /// There is no group of that name.
        public static let notFound = Code(.notFound)
        /// A group of that name exists with another definition. Nothing was written.
        public static let alreadyExists = Code(.alreadyExists)
        /// The member no longer holds the delivery's partition (its lease ran out and another
        /// member took it): the settlement, and what it would have written with it, was not
        /// written; the new holder delivers the event again.
        public static let leaseLost = Code(.leaseLost)
        /// The delivery was acknowledged or negatively acknowledged already.
        public static let alreadySettled = Code(.alreadySettled)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// One sentence saying what was wrong and what to do.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension ConsumerGroupError: CodedError {
    public var codeName: String { code.description }

    public var category: ErrorCategory {
        switch code.base {
        case .invalidInput: return .invalidInput
        case .notFound: return .notFound
        case .alreadyExists, .leaseLost, .alreadySettled: return .conflict
        }
    }

    public var httpStatus: Int {
        switch code.base {
        case .invalidInput: return 400
        case .notFound: return 404
        case .alreadyExists, .leaseLost, .alreadySettled: return 409
        }
    }
}
