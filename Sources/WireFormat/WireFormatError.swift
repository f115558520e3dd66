import EventStoreCore

/// The one error type of the WireFormat module: input that is not an event line or a batch.
/// Nothing was written.
public struct WireFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; a struct so that codes can be added without breaking a
    /// program's `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        package enum Base: String, Sendable, CaseIterable {
            case invalidLine, invalidEvent, invalidBatch, invalidQuery
        }

        package let base: Base

        package init(_ base: Base) {
            self.base = base
        }

        /// A line is not a valid event (bad JSON, a missing member, a name or size over the limits).
        public static let invalidLine = Code(.invalidLine)
        /// An element of a JSON array of events is not a valid event (the same checks as a line's).
        public static let invalidEvent = Code(.invalidEvent)
        /// The events do not make one append (none, an id given twice, a misplaced expectation, too many events).
        public static let invalidBatch = Code(.invalidBatch)

        /// A query or an append condition is not valid JSON of its shape, or breaks the store's limits.
        public static let invalidQuery = Code(.invalidQuery)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// One sentence naming the line and what is wrong.
    public let message: String
    /// The line (or the array's element) it is about, from 1, when there is one.
    public let line: Int?

    public init(_ code: Code, _ message: String, line: Int? = nil) {
        self.code = code
        self.message = message
        self.line = line
    }

    public var description: String { message }
}

extension WireFormatError: CodedError {
    public var codeName: String { code.description }

    /// Every code is a malformed input: 400, exit 64.
    public var category: ErrorCategory { .invalidInput }

    public var httpStatus: Int { 400 }
}
