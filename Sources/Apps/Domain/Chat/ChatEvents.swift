import Commands
import EventStoreCore

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
public struct MessagePosted: EventData, Equatable {
    public static let eventType = "MessagePosted"
    public var user: String
    public var text: String
    public var kind: MessageKind
    public init(user: String, text: String, kind: MessageKind) {
        self.user = user
        self.text = text
        self.kind = kind
    }

    /// The text is personal to its user (`chat-user:NAME`); forgotten, it reads as "".
    public var personalData: [PersonalData] { [PersonalData(subject: Self.subject(user), fields: ["text"])] }

    /// The subject a chat user's messages belong to: `chat-user:NAME`.
    public static func subject(_ user: String) -> String { "chat-user:\(user)" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        user = try container.decode(String.self, forKey: .user)
        text = try container.decode(String.self, forKey: .text, orWhenForgotten: "")
        kind = try container.decode(MessageKind.self, forKey: .kind)
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
public struct PresenceChanged: EventData, Equatable {
    public static let eventType = "PresenceChanged"
    public var user: String
    public var presence: Presence
    public init(user: String, presence: Presence) {
        self.user = user
        self.presence = presence
    }
}

/// Every event of a room's stream.
public enum ChatEvent: RecordableEvent, Equatable {
    case message(MessagePosted)
    case presence(PresenceChanged)

    public static let types: Set<String> = [MessagePosted.eventType, PresenceChanged.eventType]

    public init(recorded event: RecordedEvent) throws(EventDecodingError) {
        switch event.type {
        case MessagePosted.eventType: self = .message(try MessagePosted(recorded: event))
        case PresenceChanged.eventType: self = .presence(try PresenceChanged(recorded: event))
        default: throw EventDecodingError(event, reason: "\(event.type) is not a chat event")
        }
    }

    public func newEvent() throws -> NewEvent {
        switch self {
        case let .message(event): return try event.newEvent()
        case let .presence(event): return try event.newEvent()
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
