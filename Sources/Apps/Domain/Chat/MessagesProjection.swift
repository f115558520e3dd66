import EventStoreCore
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
/// `seen` (room, user) → when the user last posted, connected, came back or went away;
/// `recent` (room, time, user) → the same sighting, ordered by time, so that finding who is
/// active reads the users of the last 300 seconds only, not every user the room ever had.
///
/// A ``TypedProjection``: a room's events are decoded by hand from their data
/// (``ChatEvent/init(view:)``).
public struct MessagesProjection: TypedProjection {
    public let name = "messages"
    public let version = 4
    public let tables = ["messages", "newest", "seen", "recent"]
    public let eventTypes: Set<String>? = ChatEvent.types
    /// Anyone may append to a room's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("room", "the chat room (default: default)")] + Page.parameters

    /// How many messages a new reader is first given.
    public static let newReaderCount = 3
    /// How far back "active" reaches, in microseconds.
    public static let activeWindow: Int64 = 300 * 1_000_000

    public init() {}

    /// A room's event, decoded.
    public struct Posted {
        public let room: RowKey
        public let event: ChatEvent
        public let position: UInt64
        public let id: UUID
        /// When it was recorded, in microseconds since 1970.
        public let at: Int64

        public init(room: RowKey, event: ChatEvent, position: UInt64, id: UUID, at: Int64) {
            self.room = room
            self.event = event
            self.position = position
            self.id = id
            self.at = at
        }
    }

    public func decode(_ event: EventView) throws -> Posted? {
        guard let room = AppStreams.rowKey(ofStream: event.streamUTF8, prefix: AppStreams.chatPrefix) else { return nil }
        return Posted(room: room, event: try ChatEvent(view: event), position: event.position, id: event.id, at: event.recordedAtMicroseconds)
    }

    public func apply(_ posted: Posted, to state: inout ProjectionState) throws {
        let (room, chat, at) = (posted.room, posted.event, posted.at)
        let shown = chat.shown
        try state.put("messages", room.appending(posted.position), ChatMessage(id: posted.id, user: shown.user, text: shown.text, date: at))
        let newest = try state.get("newest", room, as: Int64.self) ?? .min
        if at > newest { try state.put("newest", room, at) }
        let sighting = chat.sighting(at: at)
        let userKey = room.appending(sighting.user)
        if let previous = try state.get("seen", userKey, as: LastSeen.self) {
            try state.delete("recent", Self.recentKey(room, previous.at, sighting.user))
        }
        try state.put("seen", userKey, sighting.seen)
        try state.put("recent", Self.recentKey(room, at, sighting.user), sighting.seen)
    }

    /// The key of a sighting in `recent`: the room, the time as a signed number, the user (none:
    /// the key that every sighting of that time and later follows).
    static func recentKey(_ room: RowKey, _ at: Int64, _ user: String?) -> RowKey {
        let timed = room.appending(Int(truncatingIfNeeded: at))
        return user.map { timed.appending($0) } ?? timed
    }

    /// `{"room","activeUsers","messages":[{"id","user","text","date"}],"newReader":[...],"active":[...]}`:
    /// active users are those who posted, connected or came back within 300 seconds of the
    /// room's newest event and have not gone away since. With `limit`, `messages` holds the room's
    /// `limit` newest messages (oldest first, as a chat shows them), or those before or after a
    /// cursor (a message's position), and `"next"` beside it is the cursor of the page that
    /// continues in the same direction (older ones from the newest or `before`, newer ones from
    /// `after`), or null.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let roomName = parameters.value("room", default: AppStreams.defaultKey)
        let room = RowKey(roomName)
        let newest = try await state.get("newest", room, as: Int64.self) ?? 0
        // Only the sightings of the window are read: each user's latest, from the window's start.
        let (since, overflow) = newest.subtractingReportingOverflow(Self.activeWindow)
        let start = overflow || since == .min ? nil : Self.recentKey(room, since - 1, nil)
        var active: [String] = []
        try await state.forEachRow("recent", prefix: room, after: start, reverse: false, as: LastSeen.self) { key, seen in
            if seen.isActive(asOf: newest), let (_, _, user) = key.decode(String.self, Int.self, String.self) { active.append(user) }
            return true
        }
        // By name, in the byte order of their keys, as the users are listed everywhere.
        active.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let newReader = try await state.rows("messages", prefix: room, reverse: true, limit: Self.newReaderCount, as: ChatMessage.self).reversed()
        var result: [(String, JSONValue)] = [("room", .string(roomName)), ("activeUsers", .int(active.count))]
        if let page = try Page(parameters, projection: name) {
            let rows = try await state.page(
                "messages", prefix: room, page, startFromEnd: true, cursorKey: { UInt64($0).map { room.appending($0) } }, as: ChatMessage.self)
            result.append(("messages", .array(rows.rows.map(\.value.json))))
            let next: UInt64? = rows.continuation.flatMap { row in row.key.decode(String.self, UInt64.self).map { $0.1 } }
            result.append(("next", next.map { JSONValue.uint($0) } ?? .null))
        } else {
            let messages = try await state.rows("messages", prefix: room, as: ChatMessage.self)
            result.append(("messages", .array(messages.map(\.value.json))))
        }
        result.append(("newReader", .array(newReader.map(\.value.json))))
        result.append(("active", .array(active.map { JSONValue.string($0) })))
        return .object(result)
    }
}
