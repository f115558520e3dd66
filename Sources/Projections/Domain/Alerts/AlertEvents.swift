import EventStore

/// An alert joined the queue.
public struct AlertPosted: DomainEvent {
    public static let type = "AlertPosted"
    public var alert: Alert
    public init(alert: Alert) { self.alert = alert }
    public var json: JSONValue { alert.json }
    public init(fields: EventFields) throws(DomainDataError) {
        let name = try fields.optionalString("name")
        guard let severity = Severity(rawValue: try fields.string("severity")) else {
            throw DomainDataError("AlertPosted needs \"severity\" as good or bad")
        }
        var alertName: AlertName?
        if let name {
            guard let known = AlertName(rawValue: name) else { throw DomainDataError("AlertPosted names an unknown alert '\(name)'") }
            alertName = known
        }
        alert = Alert(name: alertName, text: try fields.string("text"), severity: severity)
    }

    // Codable with the same flat keys as the stored data: name, text, severity.
    public init(from decoder: any Decoder) throws { alert = try Alert(from: decoder) }
    public func encode(to encoder: any Encoder) throws { try alert.encode(to: encoder) }
}

/// One alert (by its text) left the queue.
public struct AlertCleared: DomainEvent {
    public static let type = "AlertCleared"
    public var text: String
    public init(text: String) { self.text = text }
    public var json: JSONValue { ["text": .string(text)] }
    public init(fields: EventFields) throws(DomainDataError) { text = try fields.string("text") }
}

/// The queue was emptied.
public struct AllAlertsCleared: DomainEvent {
    public static let type = "AllAlertsCleared"
    public init() {}
    public var json: JSONValue { [:] }
    public init(fields: EventFields) throws(DomainDataError) {}
}

/// Every event of a user's alert stream.
public enum AlertEvent: Sendable, Equatable {
    case posted(AlertPosted)
    case cleared(AlertCleared)
    case allCleared(AllAlertsCleared)

    public static let types: Set<String> = [AlertPosted.type, AlertCleared.type, AllAlertsCleared.type]

    public init(_ recorded: RecordedEvent) throws(DomainDataError) {
        switch recorded.type {
        case AlertPosted.type: self = .posted(try AlertPosted(recorded))
        case AlertCleared.type: self = .cleared(try AlertCleared(recorded))
        case AllAlertsCleared.type: self = .allCleared(try AllAlertsCleared(recorded))
        default: throw DomainDataError("\(recorded.type) is not an alert event")
        }
    }

    public var newEvent: NewEvent {
        switch self {
        case let .posted(event): return event.newEvent
        case let .cleared(event): return event.newEvent
        case let .allCleared(event): return event.newEvent
        }
    }
}
