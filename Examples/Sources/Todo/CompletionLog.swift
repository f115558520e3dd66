import EventStoreCore

/// A reaction to new events: follows the log from a position and hands every completed item to
/// `onCompletion` as it is committed (by this process or another), until the task running it is
/// cancelled. What a notifier, a mailer or an integration would do.
public struct CompletionLog: Sendable {
    let store: any EventLog

    public init(store: any EventLog) {
        self.store = store
    }

    /// Follows the log from `start`; returns when the task is cancelled. Throws the store's
    /// errors (a closed store ends it with `EventStoreError.closed`).
    public func follow(from start: SubscriptionStart = .start, _ onCompletion: @Sendable (String, RecordedEvent) async -> Void) async throws {
        for try await event in store.subscribe(from: start, filter: EventFilter(category: "todo", types: [ItemCompleted.eventType])) {
            let completed = try ItemCompleted(recorded: event)
            await onCompletion(completed.item, event)
        }
    }
}
