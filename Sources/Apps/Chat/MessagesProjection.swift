import EventStore
import Projections
import Foundation

/// One message as a room shows it.
public struct ChatMessage: Sendable, Equatable, Codable, RowValue {
    /// The id of the event that posted it.
    public var id: UUID
    /// Nil for a system message.
    public var user: String?
    public var text: String
    /// When it was recorded, in microseconds since 1970.
    public var date: Int64

    public init(id: UUID, user: String?, text: String, date: Int64) {
        self.id = id
        self.user = user
        self.text = text
        self.date = date
    }

    /// `{"id","user","text","date"}`, the id as a lowercase UUID, the date in ISO 8601.
    public var json: JSONValue {
        [
            "id": .string(id.lowercasedString), "user": .string(user), "text": .string(text),
            "date": .string(ISO8601.string(microseconds: date)),
        ]
    }
}

/// When a user of a room was last seen, and whether they went away then.
public struct LastSeen: Sendable, Equatable, Codable, RowValue {
    /// Microseconds since 1970.
    public var at: Int64
    public var isAway: Bool

    public init(at: Int64, isAway: Bool) {
        self.at = at
        self.isAway = isAway
    }

    /// The room's rule of activity, the one the projection and the chat protocol share: whether
    /// this sighting lies within ``MessagesProjection/activeWindow`` before `now` (microseconds).
    public func isRecent(asOf now: Int64) -> Bool {
        let (age, overflow) = now.subtractingReportingOverflow(at)
        return !overflow && age <= MessagesProjection.activeWindow
    }

    /// Whether a user last seen so is active at `now`: seen recently, and not going away then.
    public func isActive(asOf now: Int64) -> Bool { !isAway && isRecent(asOf: now) }
}

extension ChatEvent {
    /// The user this event shows, and how: posting, connecting or coming back is being present;
    /// going away is not.
    public func sighting(at time: Int64) -> (user: String, seen: LastSeen) {
        switch self {
        case let .message(message): (message.user, LastSeen(at: time, isAway: false))
        case let .presence(change): (change.user, LastSeen(at: time, isAway: change.presence == .wentAway))
        }
    }
}

/// Each room's timeline: its messages in order (system messages included), the last three for
/// a new reader, and the users active in the last 300 seconds as of the room's newest event.
/// Query parameter: `room` (default "default").
///
/// Tables: `messages` (room, position) → message; `newest` room → the newest event's time;
/// `seen` (room, user) → when the user last posted, connected, came back or went away.
public struct MessagesProjection: Projection {
    public let name = "messages"
    public let version = 3
    public let tables = ["messages", "newest", "seen"]
    public let eventTypes: Set<String>? = ChatEvent.types
    /// Anyone may append to a room's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("room", "the chat room (default: default)")] + Page.parameters

    /// How many messages a new reader is first given.
    public static let newReaderCount = 3
    /// How far back "active" reaches, in microseconds.
    public static let activeWindow: Int64 = 300 * 1_000_000

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let room = AppStreams.rowKey(of: event.stream, prefix: AppStreams.chatPrefix) else { return }
        let chat = try ChatEvent(recorded: event)
        let shown = chat.shown
        let at = event.recordedAtMicroseconds
        try state.put("messages", room.appending(event.position), ChatMessage(id: event.id, user: shown.user, text: shown.text, date: at))
        let newest = try state.get("newest", room, as: Int64.self) ?? .min
        if at > newest { try state.put("newest", room, at) }
        let sighting = chat.sighting(at: at)
        try state.put("seen", room.appending(sighting.user), sighting.seen)
    }

    /// `{"room","activeUsers","messages":[{"id","user","text","date"}],"newReader":[...],"active":[...]}`:
    /// active users are those who posted, connected or came back within 300 seconds of the
    /// room's newest event and have not gone away since. With `limit`, `messages` holds the room's
    /// `limit` newest messages (oldest first, as a chat shows them), or those before or after a
    /// cursor (a message's position), and `"next"` beside it is the cursor of the page that
    /// continues in the same direction (older ones from the newest or `before`, newer ones from
    /// `after`), or null.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let roomName = parameters.value("room", default: AppStreams.defaultKey)
        let room = RowKey(roomName)
        let newest = try state.get("newest", room, as: Int64.self) ?? 0
        let seen = try state.rows("seen", prefix: room, as: LastSeen.self).filter { $0.value.isActive(asOf: newest) }
        let active: [String] = seen.compactMap { row in row.key.decode(String.self, String.self).map { $0.1 } }
        let newReader = try state.rows("messages", prefix: room, reverse: true, limit: Self.newReaderCount, as: ChatMessage.self).reversed()
        var result: [(String, JSONValue)] = [("room", .string(roomName)), ("activeUsers", .int(active.count))]
        if let page = try Page(parameters, projection: name) {
            let rows = try state.page(
                "messages", prefix: room, page, startFromEnd: true, cursorKey: { UInt64($0).map { room.appending($0) } }, as: ChatMessage.self)
            result.append(("messages", .array(rows.rows.map(\.value.json))))
            let next: UInt64? = rows.continuation.flatMap { row in row.key.decode(String.self, UInt64.self).map { $0.1 } }
            result.append(("next", next.map { JSONValue.uint($0) } ?? .null))
        } else {
            let messages = try state.rows("messages", prefix: room, as: ChatMessage.self)
            result.append(("messages", .array(messages.map(\.value.json))))
        }
        result.append(("newReader", .array(newReader.map(\.value.json))))
        result.append(("active", .array(active.map { JSONValue.string($0) })))
        return .object(result)
    }
}
