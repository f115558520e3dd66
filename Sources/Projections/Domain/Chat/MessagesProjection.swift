import EventStore

/// One message as a room shows it.
public struct ChatMessage: Sendable, Equatable, RowValue {
    /// The id of the event that posted it.
    public var id: String
    /// Nil for a system message.
    public var user: String?
    public var text: String
    /// When it was recorded, in microseconds since 1970.
    public var date: Int64

    public init(id: String, user: String?, text: String, date: Int64) {
        self.id = id
        self.user = user
        self.text = text
        self.date = date
    }

    public func encode(to writer: inout RowWriter) {
        writer.write(id)
        writer.write(user)
        writer.write(text)
        writer.write(date)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        id = try reader.read(String.self)
        user = try reader.read(String?.self)
        text = try reader.read(String.self)
        date = try reader.read(Int64.self)
    }

    /// `{"id","user","text","date"}`, the date in ISO 8601.
    public var json: JSONValue {
        ["id": .string(id), "user": .string(user), "text": .string(text), "date": .string(ISO8601.string(microseconds: date))]
    }
}

/// When each user of a room was last seen, and the room's newest event: enough to count the
/// users active in the last 300 seconds as of that event.
public struct RoomActivity: Sendable, Equatable, RowValue {
    public struct Seen: Sendable, Equatable, RowValue {
        public var user: String
        public var at: Int64
        public var isAway: Bool

        public func encode(to writer: inout RowWriter) {
            writer.write(user)
            writer.write(at)
            writer.write(isAway)
        }

        public init(user: String, at: Int64, isAway: Bool) {
            self.user = user
            self.at = at
            self.isAway = isAway
        }

        public init(from reader: inout RowReader) throws(RowDecodingError) {
            user = try reader.read(String.self)
            at = try reader.read(Int64.self)
            isAway = try reader.read(Bool.self)
        }
    }

    /// Every user of the room, in the order first seen.
    public var users: [Seen] = []
    /// The newest event's time, in microseconds since 1970.
    public var newest: Int64 = 0

    /// How far back "active" reaches.
    public static let window: Int64 = 300 * 1_000_000

    public init() {}

    /// Notes that `user` did something at `at` (went away when `isAway`).
    public mutating func saw(_ user: String, at: Int64, isAway: Bool) {
        newest = max(newest, at)
        if let index = users.firstIndex(where: { $0.user == user }) {
            users[index] = Seen(user: user, at: at, isAway: isAway)
        } else {
            users.append(Seen(user: user, at: at, isAway: isAway))
        }
    }

    /// Users who posted, connected or came back within 300 seconds of the newest event and have
    /// not gone away since.
    public var activeUsers: [String] {
        users.filter { !$0.isAway && newest - $0.at <= Self.window }.map(\.user)
    }

    public func encode(to writer: inout RowWriter) {
        writer.write(users)
        writer.write(newest)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        users = try reader.read([Seen].self)
        newest = try reader.read(Int64.self)
    }
}

/// Each room's timeline: its messages in order (system messages included), the last three for
/// a new reader, and the users active in the last 300 seconds. Query parameter: `room`
/// (default "default").
public struct MessagesProjection: Projection {
    public let name = "messages"
    public let version = 1
    public let tables = ["messages", "rooms"]
    public let eventTypes: Set<String>? = ChatEvent.types
    public let queryParameters = ["room"]

    /// How many messages a new reader is first given.
    public static let newReaderCount = 3

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let room = DomainStreams.key(of: event.stream, prefix: DomainStreams.chatPrefix) else { return }
        let chat = try ChatEvent(event)
        let shown = chat.shown
        try state.put(
            "messages", RowKey(room).appending(event.position),
            ChatMessage(id: event.id.uuidString.lowercased(), user: shown.user, text: shown.text, date: event.recordedAtMicroseconds))
        var activity = try state.get("rooms", RowKey(room), as: RoomActivity.self) ?? RoomActivity()
        switch chat {
        case let .message(message):
            activity.saw(message.user, at: event.recordedAtMicroseconds, isAway: false)
        case let .presence(change):
            activity.saw(change.user, at: event.recordedAtMicroseconds, isAway: change.presence == .wentAway)
        }
        try state.put("rooms", RowKey(room), activity)
    }

    /// `{"room","activeUsers","messages":[{"id","user","text","date"}],"newReader":[...],"active":[...]}`.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let room = parameters.value("room", default: DomainStreams.defaultKey)
        let messages = try state.rows("messages", prefix: RowKey(room), as: ChatMessage.self).map(\.value)
        let activity = try state.value("rooms", RowKey(room), as: RoomActivity.self) ?? RoomActivity()
        let active = activity.activeUsers
        return [
            "room": .string(room), "activeUsers": .int(active.count), "messages": .array(messages.map(\.json)),
            "newReader": .array(messages.suffix(Self.newReaderCount).map(\.json)), "active": .array(active.map { .string($0) }),
        ]
    }
}
