import EventStoreCore

/// A ``Decider`` whose state is folded from the events a query matches, not from whole streams
/// (a dynamic consistency boundary): a command reads only the facts its rule spans ("this site's
/// reservations", "this camper") across any streams, and its events are appended on the
/// condition that no event matching that query was recorded since it read them. Its events carry
/// tags (``tags(for:in:)``) so that later queries find them. ``CommandHandler`` runs it.
///
/// ## Topics
/// ### Requirements
/// - ``query(for:)``
/// - ``latestQuery(for:)``
/// - ``stream(for:)``
/// - ``tags(for:in:)``
public protocol QueryDecider: Decider where Event: RecordableEvent {
    /// The events the state for `command` is folded from (every one that matches), and the
    /// query no event may match after them for the decided events to commit.
    func query(for command: Command) -> EventQuery

    /// A query of which only the last matching event is folded in too (a counter's latest value,
    /// such as the last id given), and guarded as ``query(for:)`` is; nil (the default) for none.
    func latestQuery(for command: Command) -> EventQuery?

    /// The stream `event` is appended to.
    func stream(for event: Event) -> String

    /// The tags `event` is recorded with, given the state after the command's events.
    func tags(for event: Event, in state: State) -> [String]
}

extension QueryDecider {
    /// No latest event.
    public func latestQuery(for command: Command) -> EventQuery? { nil }
}
