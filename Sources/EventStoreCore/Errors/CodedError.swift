/// The one shape of the project's errors: a code programs switch on, a category, one sentence,
/// and details. Each error type says through this conformance how the faces report it (the HTTP
/// status an API answers with; the exit code, by its category, a command-line tool exits with),
/// so that adding an error type or a code touches no central switch.
public protocol CodedError: Error, Sendable, CustomStringConvertible {
    /// The code's name, as the API's JSON `code` and the logs spell it (`versionConflict`).
    var codeName: String { get }
    /// What kind of failure it is; decides the exit code.
    var category: ErrorCategory { get }
    /// One sentence: what was wrong and what to do.
    var message: String { get }
    /// The HTTP status an API answers this error with (400 bad input, 404, 409 conflicts, 503 a
    /// store that cannot serve now, ...).
    var httpStatus: Int { get }
    /// Members an API adds to its `{"error": ..., "code": ...}` object, in order (a version
    /// conflict's stream and versions); none by default.
    var details: [(String, JSONValue)] { get }
}

extension CodedError {
    public var details: [(String, JSONValue)] { [] }
}
