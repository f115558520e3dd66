/// The one error type of the Projections module.
public struct ProjectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Equatable {
        /// No projection of that name is registered.
        case unknownProjection
        /// A projection's definition breaks a rule (a name, duplicate tables, an unknown query parameter).
        case invalidDefinition
        /// A query was given a parameter the projection does not understand, or a bad value.
        case invalidQuery
        /// A projection's `apply` threw: it is stopped before that event.
        case stopped
        /// A stored row or checkpoint cannot be decoded.
        case damagedState
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

    static func damaged(_ projection: String, _ detail: String) -> ProjectionError {
        ProjectionError(
            .damagedState, "The stored state of '\(projection)' cannot be read (\(detail)); rebuild it with `esctl rebuild \(projection)`.",
            projection: projection)
    }
}
