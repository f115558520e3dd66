import EventStore

/// How a chat message came to be.
public enum MessageKind: String, Sendable, Codable, CaseIterable {
    /// The user said it.
    case said
    /// One step of a countdown ("3...", "2...", "1...", "🎉 TEXT").
    case countdown
    /// The user shared a location ("📍 ADDRESS").
    case location
}

/// A user's message in a room. Its id is the event's id; its date, the time it was recorded.
public struct MessagePosted: DomainEvent {
    public static let type = "MessagePosted"
    public var user: String
    public var text: String
    public var kind: MessageKind
    public init(user: String, text: String, kind: MessageKind) {
        self.user = user
        self.text = text
        self.kind = kind
    }
    public var json: JSONValue { ["user": .string(user), "text": .string(text), "kind": .string(kind.rawValue)] }
    public init(fields: EventFields) throws(DomainDataError) {
        user = try fields.string("user")
        text = try fields.string("text")
        guard let kind = MessageKind(rawValue: try fields.string("kind")) else {
            throw DomainDataError("MessagePosted needs \"kind\" as said, countdown or location")
        }
        self.kind = kind
    }
}

/// A user's presence changed; the room shows it as a system message.
public enum Presence: String, Sendable, Codable, CaseIterable {
    case connected
    case wentAway
    case cameBack

    /// The system message for `user`: "NAME connected", "NAME went away", "NAME came back".
    public func message(for user: String) -> String {
        switch self {
        case .connected: return "\(user) connected"
        case .wentAway: return "\(user) went away"
        case .cameBack: return "\(user) came back"
        }
    }
}

/// A user connected, went away or came back.
public struct PresenceChanged: DomainEvent {
    public static let type = "PresenceChanged"
    public var user: String
    public var presence: Presence
    public init(user: String, presence: Presence) {
        self.user = user
        self.presence = presence
    }
    public var json: JSONValue { ["user": .string(user), "presence": .string(presence.rawValue)] }
    public init(fields: EventFields) throws(DomainDataError) {
        user = try fields.string("user")
        guard let presence = Presence(rawValue: try fields.string("presence")) else {
            throw DomainDataError("PresenceChanged needs \"presence\" as connected, wentAway or cameBack")
        }
        self.presence = presence
    }
}

/// Every event of a room's stream.
public enum ChatEvent: Sendable, Equatable {
    case message(MessagePosted)
    case presence(PresenceChanged)

    public static let types: Set<String> = [MessagePosted.type, PresenceChanged.type]

    public init(_ recorded: RecordedEvent) throws(DomainDataError) {
        switch recorded.type {
        case MessagePosted.type: self = .message(try MessagePosted(recorded))
        case PresenceChanged.type: self = .presence(try PresenceChanged(recorded))
        default: throw DomainDataError("\(recorded.type) is not a chat event")
        }
    }

    public var newEvent: NewEvent {
        switch self {
        case let .message(event): return event.newEvent
        case let .presence(event): return event.newEvent
        }
    }

    /// The message the room shows: the user's own text, or a system message (no user).
    public var shown: (user: String?, text: String) {
        switch self {
        case let .message(event): return (event.user, event.text)
        case let .presence(event): return (nil, event.presence.message(for: event.user))
        }
    }
}
