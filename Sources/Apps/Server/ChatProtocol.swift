import Apps
import EventStore
import Foundation
import WireFormat

/// The wire format of the chat app's original client (Blabber): what `/chat/room` writes and
/// `/chat/say` reads, as a default `JSONEncoder` and `JSONDecoder` of the app write and read them.
enum ChatProtocol {
    /// The body of `POST /chat/say`: the app's `Message`. The server keeps only `user` and
    /// `message`: the recorded event gets its own id and the store's time.
    struct Say: Decodable {
        let id: UUID
        let user: String?
        let message: String
        /// Seconds since 2001-01-01T00:00:00Z, a JSON number (a plain `JSONDecoder` reads it).
        let date: Date
    }

    /// The status line: `{"activeUsers":N}`.
    static func statusLine(activeUsers: Int) -> String {
        var object = JSONObjectWriter()
        object.add("activeUsers", activeUsers)
        return object.finish() + "\r\n"
    }

    /// A message line, `{"id":"UUID","user":"NAME","message":"TEXT","date":SECONDS}` and `\r\n`:
    /// the event's id (upper case, as Foundation writes a UUID), the user left out for a system
    /// message, the date in seconds since 2001-01-01T00:00:00Z. Nil for an event of the room's
    /// stream that is not a chat event.
    static func line(_ event: RecordedEvent) -> String? {
        guard let chat = try? ChatEvent(recorded: event) else { return nil }
        let shown = chat.shown
        var object = JSONObjectWriter()
        object.add("id", event.id.uuidString)
        if let user = shown.user { object.add("user", user) }
        object.add("message", shown.text)
        object.add("date", rawJSON: number(event.recordedAt.timeIntervalSinceReferenceDate))
        return object.finish() + "\r\n"
    }

    /// A number as JSON: whole seconds without a fraction, as `JSONEncoder` writes them.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// The user name of `GET /chat/room?NAME`: the whole query string, `+` as a space, then
    /// percent-decoded. Nil when there is none, it does not decode, or it is only white space.
    static func userName(query: String?) -> String? {
        guard let query, let name = query.replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
            !name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        else { return nil }
        return name
    }

    /// The system message a client sends without a user ("NAME went away", "NAME came back",
    /// "NAME connected") as the presence it tells; nil for any other text.
    static func presence(in text: String) -> (user: String, presence: Presence)? {
        for presence in Presence.allCases {
            let suffix = presence.message(for: "")
            if text.hasSuffix(suffix), text.count > suffix.count {
                return (String(text.dropLast(suffix.count)), presence)
            }
        }
        return nil
    }

    /// How many events back `/chat/room` looks for active users at most: a room busier than
    /// this within 300 s counts only the users of its newest events.
    static let activityScanLimit = 4096

    /// The users of `room` active within ``MessagesProjection/activeWindow`` before `now`
    /// (microseconds since 1970), as the messages projection counts them: those who posted,
    /// connected or came back in the window and have not gone away since. Reads the room's
    /// stream backward from `version`, a page at a time, until an event older than the window
    /// or ``activityScanLimit`` events. Also returns the room's last `count` messages through
    /// `version`, oldest first.
    static func activity(
        of stream: String, through version: UInt64, now: Int64, lastMessages count: Int, in store: any EventLog
    ) async throws -> (activeUsers: Int, lastMessages: [RecordedEvent]) {
        var seen: Set<String> = []
        var active = 0
        var last: [RecordedEvent] = []
        var next: UInt64? = version
        var scanned = 0
        var windowEnded = false
        scan: while let from = next, from >= 1, scanned < activityScanLimit {
            let page = try await store.readStream(stream, from: from, direction: .backward, limit: 256)
            guard !page.isEmpty else { break }
            for event in page {
                scanned += 1
                guard let chat = try? ChatEvent(recorded: event) else { continue }
                if last.count < count { last.append(event) }
                if !windowEnded {
                    let sighting = chat.sighting(at: event.recordedAtMicroseconds)
                    if !sighting.seen.isRecent(asOf: now) {
                        windowEnded = true
                    } else if seen.insert(sighting.user).inserted, sighting.seen.isActive(asOf: now) {
                        // Newest first: a user's first event seen here is their latest.
                        active += 1
                    }
                }
                if windowEnded, last.count >= count { break scan }
            }
            next = page.last.map { $0.version - 1 }
        }
        return (active, last.reversed())
    }
}
