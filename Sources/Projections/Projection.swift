import EventStoreCore

/// A read model: a pure fold of the log into tables of rows.
///
/// `apply` takes an event and the projection's state and changes the state; it must use nothing
/// but them (no clock, no randomness, no I/O: time comes from the event), so that the same
/// events always give the same rows. The state starts as empty tables. The runner keeps the rows
/// and a checkpoint (the last position applied) in LMDB, written in one transaction.
///
/// Every requirement must be declared, with exactly these types (none has a default, so a
/// property of another type, `var eventTypes: [String]?` say, does not compile instead of being
/// silently ignored):
///
/// ```swift
/// struct TodoCounts: Projection {
///     let name = "todo-counts"                          // String
///     let version = 1                                   // Int: bump it when apply or a row changes
///     let tables = ["counts"]                           // [String]
///     let eventTypes: Set<String>? = ["ItemAdded"]      // Set<String>?: nil for every event
///     let errorPolicy = ProjectionErrorPolicy.stop      // ProjectionErrorPolicy
///     let queryParameters: [QueryParameter] = []        // [QueryParameter]
///     func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws { ... }
///     func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue { ... }
/// }
/// ```
///
/// ## Topics
/// ### Requirements
/// - ``name``
/// - ``version``
/// - ``tables``
/// - ``eventTypes``
/// - ``errorPolicy``
/// - ``queryParameters``
/// - ``apply(_:to:)``
/// - ``query(_:_:)``
public protocol Projection: Sendable {
    /// The projection's name: letters, digits, '-', '_' and '.', at most 100 bytes.
    var name: String { get }
    /// Bump it whenever `apply` or a row's encoding changes: the state is rebuilt at the next open.
    var version: Int { get }
    /// The tables the state is made of (same rules as the name; a name may not start with '_',
    /// which the runner keeps for its own table of passed-over events).
    var tables: [String] { get }
    /// The event types `apply` wants; the runner passes over the others without decoding them.
    /// Nil: every event.
    var eventTypes: Set<String>? { get }
    /// What the runner does when `apply` throws.
    var errorPolicy: ProjectionErrorPolicy { get }
    /// The parameters ``query(_:_:)`` takes; a query given any other is refused before it runs.
    var queryParameters: [QueryParameter] { get }

    /// Folds one event into the state. Throwing stops the projection at this event (or skips the
    /// event, see ``errorPolicy``); whatever this call changed before throwing is undone.
    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws

    /// The state, or the part the parameters select, as JSON for `esctl query` and other faces.
    func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue
}

/// What happens when a projection's `apply` throws on an event.
public enum ProjectionErrorPolicy: Sendable, Equatable {
    /// Stop the projection before the event: its tables and checkpoint stay where the last
    /// committed batch left them, queries fail with the error, and every catch-up tries again
    /// (fix the projection and bump its version, or record a decision to pass over that event
    /// with ``ProjectionRunner/passOver(_:position:reason:)``). The default of most projections.
    case stop
    /// Pass over the event: undo what `apply` changed for it, record it among the projection's
    /// passed-over events (part of its state, and of its hash), and go on. For projections of
    /// data others may write, where one bad event must not stop the read model for everyone.
    case skip
}

/// One parameter a projection's query takes (`user` for a user's cart).
public struct QueryParameter: Sendable, Equatable {
    /// The name (`user`); faces use it as an option (`esctl query carts --user ann`).
    public let name: String
    /// What it selects, in a few words, with its default when it has one.
    public let help: String

    public init(_ name: String, _ help: String) {
        self.name = name
        self.help = help
    }
}

/// Named parameters of a query (`--user alice` is `["user": "alice"]`).
public struct QueryParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public private(set) var values: [String: String]

    public init(_ values: [String: String] = [:]) {
        self.values = values
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        values = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }

    public subscript(name: String) -> String? { values[name] }

    /// The parameter's value, or `fallback` when it was not given.
    public func value(_ name: String, default fallback: String) -> String { values[name] ?? fallback }
}
