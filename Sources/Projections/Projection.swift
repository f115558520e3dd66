import EventStore

/// A read model: a pure fold of the log into tables of rows.
///
/// `apply` takes an event and the projection's state and changes the state; it must use nothing
/// but them (no clock, no randomness, no I/O: time comes from the event), so that the same
/// events always give the same rows. The state starts as empty tables. The runner keeps the rows
/// and a checkpoint (the last position applied) in LMDB, written in one transaction.
public protocol Projection: Sendable {
    /// The projection's name: letters, digits, '-', '_' and '.', at most 100 bytes.
    var name: String { get }
    /// Bump it whenever `apply` or a row's encoding changes: the state is rebuilt at the next open.
    var version: Int { get }
    /// The tables the state is made of (same rules as the name).
    var tables: [String] { get }
    /// The event types `apply` wants; others are skipped without being decoded. Nil: every event.
    var eventTypes: Set<String>? { get }
    /// What the runner does when `apply` throws.
    var errorPolicy: ProjectionErrorPolicy { get }
    /// The parameters ``query(_:_:)`` understands (for example "user").
    var queryParameters: [String] { get }

    /// Folds one event into the state. Throwing stops the projection at this event (or skips the
    /// event, see ``errorPolicy``); whatever this call changed before throwing is undone.
    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws

    /// The state, or the part the parameters select, as JSON for `esctl query`.
    func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue
}

extension Projection {
    public var eventTypes: Set<String>? { nil }
    public var errorPolicy: ProjectionErrorPolicy { .stop }
    public var queryParameters: [String] { [] }
}

/// What happens when a projection's `apply` throws on an event.
public enum ProjectionErrorPolicy: Sendable, Equatable {
    /// Stop the projection before the event: its tables and checkpoint stay where the last
    /// committed batch left them, queries fail with the error, and every catch-up tries again
    /// (fix the projection, bump its version, and it rebuilds). The default.
    case stop
    /// Undo what `apply` changed for the event, count it as skipped, and go on.
    case skip
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
