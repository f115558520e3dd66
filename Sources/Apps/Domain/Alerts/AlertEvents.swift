import Commands
import EventStoreCore

/// An alert joined the queue.
public struct AlertPosted: EventData, Equatable {
    public static let eventType = "AlertPosted"
    public var alert: Alert
    public init(alert: Alert) { self.alert = alert }

    // The alert's own members, flat: name, text, severity.
    public init(from decoder: any Decoder) throws { alert = try Alert(from: decoder) }
    public func encode(to encoder: any Encoder) throws { try alert.encode(to: encoder) }
}

/// One alert (by its text) left the queue.
public struct AlertCleared: EventData, Equatable {
    public static let eventType = "AlertCleared"
    public var text: String
    public init(text: String) { self.text = text }
}

/// The queue was emptied.
public struct AllAlertsCleared: EventData, Equatable {
    public static let eventType = "AllAlertsCleared"
    public init() {}
}

/// Every event of a user's alert stream.
public enum AlertEvent: RecordableEvent, Equatable {
    case posted(AlertPosted)
    case cleared(AlertCleared)
    case allCleared(AllAlertsCleared)

    public static let types: Set<String> = [AlertPosted.eventType, AlertCleared.eventType, AllAlertsCleared.eventType]

    public init(recorded event: RecordedEvent) throws(EventDecodingError) {
        switch event.type {
        case AlertPosted.eventType: self = .posted(try AlertPosted(recorded: event))
        case AlertCleared.eventType: self = .cleared(try AlertCleared(recorded: event))
        case AllAlertsCleared.eventType: self = .allCleared(try AllAlertsCleared(recorded: event))
        default: throw EventDecodingError(event, reason: "\(event.type) is not an alert event")
        }
    }

    public func newEvent() throws -> NewEvent {
        switch self {
        case let .posted(event): return try event.newEvent()
        case let .cleared(event): return try event.newEvent()
        case let .allCleared(event): return try event.newEvent()
        }
    }
}
