import Projections

/// What a user can do in a chat room.
public enum ChatCommand: Sendable, Equatable {
    case say(String)
    case shareLocation(String)
    case presence(Presence)
}

/// The chat's rules: every message needs a user and some text.
public enum ChatDecider {
    /// The steps of a countdown to `text`: "3...", "2...", "1...", then "🎉 TEXT".
    public static func countdown(to text: String) -> [String] {
        ["3...", "2...", "1...", "🎉 " + text]
    }

    /// Decides what `command` by `user` records; an empty text is ``CommandError/Code/invalidInput``.
    public static func decide(_ command: ChatCommand, user: String) throws(CommandError) -> ChatEvent {
        try Validate.key(user, "user")
        switch command {
        case let .say(text):
            try Validate.text(text, "message")
            return .message(MessagePosted(user: user, text: text, kind: .said))
        case let .shareLocation(address):
            try Validate.text(address, "address")
            return .message(MessagePosted(user: user, text: "📍 " + address, kind: .location))
        case let .presence(presence):
            return .presence(PresenceChanged(user: user, presence: presence))
        }
    }
}
