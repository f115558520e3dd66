import EventStoreCore

/// The rules of one part of an application, as pure functions (the shape of TCA's reducers and
/// Commanded's aggregates): the state a history of events folds into, and what a command records
/// given that state.
///
/// Both functions must be pure: no clock, no randomness, no I/O. ``CommandHandler`` may call
/// ``decide(_:state:)`` several times for one command (once per attempt, when other writers get
/// in between), and folds ``evolve(_:with:)`` over events read back from the log.
///
/// ## Topics
/// ### Requirements
/// - ``initialState``
/// - ``evolve(_:with:)``
/// - ``decide(_:state:)``
public protocol Decider: Sendable {
    /// What the events fold into.
    associatedtype State: Sendable
    /// What a caller asks for.
    associatedtype Command: Sendable
    /// What is recorded.
    associatedtype Event: Sendable

    /// The state before any event.
    var initialState: State { get }

    /// Folds one event into the state.
    func evolve(_ state: inout State, with event: Event)

    /// The events `command` records given `state`, in order; none when there is nothing to do.
    /// Throws (an error of the application's own) to refuse it: then nothing is recorded.
    func decide(_ command: Command, state: State) throws -> [Event]
}

/// A ``Decider`` whose state lives in streams of an event store: the streams its state is folded
/// from, and the stream each event it decides goes to. ``CommandHandler`` runs it.
///
/// ## Topics
/// ### Requirements
/// - ``streams``
/// - ``stream(for:)``
public protocol StreamDecider: Decider where Event: RecordableEvent {
    /// The streams whose events make the state, folded in position order. May be empty, for a
    /// decider that needs no state (it then appends without an expected version).
    var streams: [String] { get }

    /// The stream `event` is appended to.
    func stream(for event: Event) -> String

    /// The tags `event` is recorded with, given the state after the command's events, so that
    /// queries and conditional appends (``QueryDecider``) find it; none by default.
    func tags(for event: Event, in state: State) -> [String]
}

extension StreamDecider {
    /// No tags.
    public func tags(for event: Event, in state: State) -> [String] { [] }
}

/// A decider's event type as it is read from and written to the log: usually an enum with one
/// case per `EventData` type, switching on the recorded type name.
public protocol RecordableEvent: Sendable {
    /// Decodes a recorded event. Throws `EventDecodingError` when it is not one of these
    /// events or its data does not decode (the handler passes over such an event, and says so).
    init(recorded event: RecordedEvent) throws(EventDecodingError)

    /// The event ready to append. Throws when it holds what its encoding cannot (an infinite number).
    func newEvent() throws -> NewEvent
}
