import Projections

/// What a user can do with their alert queue.
public enum AlertCommand: Sendable, Equatable {
    /// Post a free-text alert.
    case post(text: String, severity: Severity)
    /// Clear one alert, named (a built-in alert's name) or by its text.
    case clear(String)
    /// Clear every alert.
    case clearAll
}

/// The alert queue's rules, as a pure function of the queue and the command.
public enum AlertDecider {
    /// Decides what `command` records. Posting a text already queued records nothing (no second
    /// entry, no second notification); clearing an alert that is not queued is
    /// ``CommandError/Code/notFound``; an empty text is ``CommandError/Code/invalidInput``.
    public static func decide(_ command: AlertCommand, queue: AlertQueue) throws(CommandError) -> [AlertEvent] {
        switch command {
        case let .post(text, severity):
            try Validate.text(text, "alert text")
            if queue.contains(text: text) { return [] }
            return [.posted(AlertPosted(alert: Alert(name: nil, text: text, severity: severity)))]
        case let .clear(nameOrText):
            let text = AlertName(rawValue: nameOrText)?.text ?? nameOrText
            guard queue.contains(text: text) else {
                throw CommandError(.notFound, "No alert '\(nameOrText)' is queued; `esctl query alerts` (with the same --user) lists the queue.")
            }
            return [.cleared(AlertCleared(text: text))]
        case .clearAll:
            return queue.count == 0 ? [] : [.allCleared(AllAlertsCleared())]
        }
    }
}
