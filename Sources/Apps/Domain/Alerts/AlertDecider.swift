import Commands
import EventStoreCore

/// What a user can do with their alert queue.
public enum AlertCommand: Sendable, Equatable {
    /// Post a free-text alert.
    case post(text: String, severity: Severity)
    /// Clear one alert, by a built-in alert's name or by its text.
    case clear(String)
    /// Clear every alert.
    case clearAll
}

/// The alert queue's rules, for one user. Posting a text already queued records nothing (no
/// second entry, no second notification); clearing an alert that is not queued is
/// ``AppError/Code/notFound``; an empty text is ``AppError/Code/invalidInput``.
public struct AlertDecider: SnapshotDecider {
    public let user: String
    public let snapshotName = "alerts"
    public let snapshotVersion = 1

    public init(user: String = AppStreams.defaultKey) {
        self.user = user
    }

    public var streams: [String] { [AppStreams.alerts(user)] }
    public func stream(for event: AlertEvent) -> String { AppStreams.alerts(user) }
    public var initialState: AlertQueue { AlertQueue() }
    public func evolve(_ state: inout AlertQueue, with event: AlertEvent) { state.apply(event) }

    public func decide(_ command: AlertCommand, state queue: AlertQueue) throws -> [AlertEvent] {
        try Validate.key(user, "user")
        switch command {
        case let .post(text, severity):
            try Validate.text(text, "alert text")
            if queue.contains(text: text) { return [] }
            return [.posted(AlertPosted(alert: Alert(name: nil, text: text, severity: severity)))]
        case let .clear(nameOrText):
            // A name first (a built-in alert queued under its text), then the words as a text
            // (a free-text alert may read like a name).
            if let named = AlertName(rawValue: nameOrText), queue.contains(text: named.text) {
                return [.cleared(AlertCleared(text: named.text))]
            }
            guard queue.contains(text: nameOrText) else {
                throw AppError(.notFound, "No alert '\(nameOrText)' is queued.", listedBy: "alerts")
            }
            return [.cleared(AlertCleared(text: nameOrText))]
        case .clearAll:
            return queue.count == 0 ? [] : [.allCleared(AllAlertsCleared())]
        }
    }
}
