import EventStoreCore

/// The one error type of the Projections module.
public struct ProjectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; a struct so that codes can be added without breaking a
    /// program's `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        package enum Base: String, Sendable, CaseIterable {
            case unknownProjection, invalidDefinition, invalidQuery, stopped, damagedState, timedOut, notCaughtUp
        }

        package let base: Base

        package init(_ base: Base) {
            self.base = base
        }

        /// No projection of that name is registered.
        public static let unknownProjection = Code(.unknownProjection)
        /// A projection's definition breaks a rule (a name, duplicate tables, an unknown query
        /// parameter, a row that cannot be written).
        public static let invalidDefinition = Code(.invalidDefinition)
        /// A query was given a parameter the projection does not understand, or a bad value.
        public static let invalidQuery = Code(.invalidQuery)
        /// A projection's `apply` threw: it is stopped before that event.
        public static let stopped = Code(.stopped)
        /// A stored row or checkpoint cannot be decoded.
        public static let damagedState = Code(.damagedState)
        /// A wait for a projection to reach a position ran out of time.
        public static let timedOut = Code(.timedOut)
        /// A projection's stored state is behind the log (or was built by another definition)
        /// and cannot be caught up here: the store is open read-only.
        public static let notCaughtUp = Code(.notCaughtUp)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// One sentence: what was wrong and what to do.
    public let message: String
    /// The projection concerned, when there is one.
    public let projection: String?
    /// The event position concerned, when there is one.
    public let position: UInt64?

    public init(_ code: Code, _ message: String, projection: String? = nil, position: UInt64? = nil) {
        self.code = code
        self.message = message
        self.projection = projection
        self.position = position
    }

    public var description: String { message }

    /// The error for a projection stopped by an `apply` that threw at `position`.
    static func stopped(_ projection: String, at position: UInt64, cause: String) -> ProjectionError {
        ProjectionError(
            .stopped,
            "The projection '\(projection)' stopped at position \(position): \(cause). Fix it and bump its version to rebuild, or give it the .skip error policy.",
            projection: projection, position: position)
    }

    static func processorStopped(_ processor: String, at position: UInt64, cause: String) -> ProjectionError {
        ProjectionError(
            .stopped,
            "The processor '\(processor)' stopped at position \(position): \(cause). Nothing of its reaction to that event was written; fix it and run it again.",
            projection: processor, position: position)
    }

    static func damaged(_ projection: String, _ detail: String) -> ProjectionError {
        ProjectionError(
            .damagedState, "The stored state of '\(projection)' cannot be read (\(detail)); rebuild it with `esctl rebuild \(projection)`.",
            projection: projection)
    }
}

/// Matches an error against a code in a `catch`: `catch ProjectionError.Code.stopped`.
public func ~= (code: ProjectionError.Code, error: any Error) -> Bool {
    (error as? ProjectionError)?.code == code
}

extension ProjectionError: CodedError {
    public var codeName: String { code.description }

    public var category: ErrorCategory {
        switch code.base {
        case .unknownProjection: return .notFound
        case .invalidQuery: return .invalidInput
        case .damagedState, .notCaughtUp: return .unavailable
        case .stopped, .invalidDefinition: return .internalFailure
        case .timedOut: return .timedOut
        }
    }

    public var httpStatus: Int {
        switch code.base {
        case .unknownProjection: return 404
        case .invalidDefinition, .invalidQuery: return 400
        case .stopped, .notCaughtUp: return 503
        // A client's precondition (a state at least as recent as minPosition) not met in time:
        // the server did not fail, so not a 5xx.
        case .timedOut: return 412
        case .damagedState: return 500
        }
    }
}
