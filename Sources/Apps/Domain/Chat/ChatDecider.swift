import Commands
import EventStoreCore

/// What a user can do in a chat room.
public enum ChatCommand: Sendable, Equatable {
    case say(String)
    case shareLocation(String)
    case presence(Presence)
    /// One step of a countdown (the ``AppBackend`` paces the steps on its clock).
    case countdownStep(String)
}

/// The chat's rules, for one user in one room: every message needs a user and some text (at
/// most ``AppLimits/maximumTextCharacters``). It decides on the command alone, so it loads no
/// state: a room's history is never read to post in it.
public struct ChatDecider: StreamDecider {
    public let room: String
    public let user: String

    public init(room: String = AppStreams.defaultKey, user: String) {
        self.room = room
        self.user = user
    }

    /// The steps of a countdown to `text`: "3...", "2...", "1...", then "🎉 TEXT".
    public static func countdown(to text: String) -> [String] {
        ["3...", "2...", "1...", "🎉 " + text]
    }

    public var streams: [String] { [] }
    public func stream(for event: ChatEvent) -> String { AppStreams.chat(room) }
    public var initialState: Void { () }
    public func evolve(_ state: inout Void, with event: ChatEvent) {}

    public func decide(_ command: ChatCommand, state: Void) throws -> [ChatEvent] {
        try Validate.key(room, "room")
        try Validate.key(user, "user")
        switch command {
        case let .say(text):
            try Validate.text(text, "message")
            return [.message(MessagePosted(user: user, text: text, kind: .said))]
        case let .shareLocation(address):
            try Validate.text(address, "address")
            return [.message(MessagePosted(user: user, text: "📍 " + address, kind: .location))]
        case let .presence(presence):
            return [.presence(PresenceChanged(user: user, presence: presence))]
        case let .countdownStep(text):
            try Validate.text(text, "countdown text")
            return [.message(MessagePosted(user: user, text: text, kind: .countdown))]
        }
    }
}
