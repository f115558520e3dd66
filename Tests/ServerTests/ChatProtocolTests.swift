import Apps
import AppsServer
import AsyncHTTPClient
import EventStore
import EventStoreTesting
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import NIOCore
import Projections
import Testing

/// The chat app's original client (Blabber), talking to the server as its `BlabberModel` does:
/// the name percent-encoded with `.urlUserAllowed` as the whole query, a default `JSONEncoder`
/// for posts, a default `JSONDecoder` for each line of the room.
struct BlabberClient {
    struct ServerStatus: Codable, Equatable {
        let activeUsers: Int
    }

    struct Message: Codable, Equatable {
        let id: UUID
        let user: String?
        let message: String
        var date: Date
    }

    let port: Int
    let username: String

    /// `chat()`: opens the room.
    func connect() async throws -> LiveResponse {
        let query = try #require(username.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed))
        return try await LiveResponse.open(port: port, "/chat/room?\(query)")
    }

    /// `say(_:isSystemMessage:)`: posts a message (a system message has no user); returns the
    /// status and the body as "STATUS BODY". The app sends its own id and date; `date` here
    /// stands for `Date()`.
    func say(_ text: String, isSystemMessage: Bool = false, date: Date = Date(timeIntervalSinceReferenceDate: 0)) async throws
        -> String
    {
        let message = Message(
            id: SequentialIDs.id(999), user: isSystemMessage ? nil : username, message: text, date: date)
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/chat/say")
        request.method = .POST
        request.body = .bytes(ByteBuffer(bytes: Array(try JSONEncoder().encode(message))))
        let sent = request
        return try await withTimeout(.seconds(10), "the answer to POST /chat/say") {
            let response = try await HTTPClient.shared.execute(sent, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            return "\(response.status.code) \(String(buffer: body))"
        }
    }

    /// The room's lines as the app reads them: the status first, then messages.
    static func parse(_ text: String) throws -> (status: ServerStatus, messages: [Message]) {
        var lines = text.components(separatedBy: "\r\n")
        #expect(lines.last == "", "every line ends in CR LF")
        lines.removeLast()
        let decoder = JSONDecoder()
        let status = try decoder.decode(ServerStatus.self, from: Data(try #require(lines.first).utf8))
        let messages = try lines.dropFirst().map { try decoder.decode(Message.self, from: Data($0.utf8)) }
        return (status, messages)
    }
}

@Suite("The chat app's own protocol: GET /chat/room, POST /chat/say")
struct ChatProtocolTests {
    /// A live server over a fresh store whose clock steps `step` seconds per recorded append.
    static func withServer(
        step: TimeInterval = 1, clock: any Clock<Duration> = ContinuousClock(),
        _ body: @escaping @Sendable (Server, Int) async throws -> Void
    ) async throws {
        var configuration = TemporaryStore.deterministicConfiguration(step: step)
        configuration.upcasters = AppCatalog.upcasters
        try await TemporaryStore.with(configuration: configuration) { store in
            let runner = try await ProjectionRunner(store: store, projections: AppCatalog.all)
            let server = try Server(store: store, runner: runner, apps: AppCatalog.modules, parts: SeedServerParts.all(), options: ServerOptions(port: 0), clock: clock)
            try await ServerFixture.test(server, .live) { client in
                try await body(server, try #require(client.port))
            }
        }
    }

    /// The room's events as recorded.
    static func roomEvents(_ server: Server) async throws -> [RecordedEvent] {
        try await server.store.readStream("chat-default", from: nil, direction: .forward, limit: 1000)
    }

    /// The line the server must write for `event`.
    static func line(_ event: RecordedEvent, user: String?, _ text: String) -> String {
        let userPart = user.map { "\"user\":\"\($0)\"," } ?? ""
        return "{\"id\":\"\(event.id.uuidString)\",\(userPart)\"message\":\"\(text)\",\"date\":\(Int(event.recordedAt.timeIntervalSinceReferenceDate))}\r\n"
    }

    @Test("the app's session: status, last 3 messages, say, countdown and system messages arrive as committed")
    func appSession() async throws {
        let clock = TestClock()
        try await Self.withServer(clock: clock) { server, port in
            // Given three users who spoke in the room.
            for (user, text) in [("ann", "hi"), ("bob", "yo"), ("carl", "hey")] {
                _ = try await AppBackend(store: server.store, clock: server.clock).chat(.say(text), user: user, room: "default")
            }
            // When "dora smith" connects as the app does.
            let dora = BlabberClient(port: port, username: "dora smith")
            let room = try await dora.connect()
            #expect(room.status == 200)
            #expect(room.headers["content-type"] == "application/octet-stream")
            // Then her connection is recorded, and she reads 4 active users and the last 3 messages.
            var events = try await Self.roomEvents(server)
            #expect(events.count == 4)
            var expected = "{\"activeUsers\":4}\r\n" + Self.line(events[1], user: "bob", "yo") + Self.line(events[2], user: "carl", "hey")
                + Self.line(events[3], user: nil, "dora smith connected")
            try await room.waitForText("the status and the last 3 messages", asLongAs: expected)
            #expect(room.text == expected)
            // The store's clock: read once when it opens, then once per append, a second apart.
            #expect(events[3].recordedAt.timeIntervalSinceReferenceDate == 788_918_404)
            let first = try BlabberClient.parse(room.text)
            #expect(first.status == BlabberClient.ServerStatus(activeUsers: 4))
            #expect(first.messages.map(\.message) == ["yo", "hey", "dora smith connected"])
            #expect(first.messages.map(\.id) == events[1...3].map(\.id))
            #expect(first.messages.map(\.date) == events[1...3].map(\.recordedAt))

            // When she says something, counts down as the app does (four posts), and goes away.
            #expect(try await dora.say("hello") == "200 OK")
            for step in ["3...", "2...", "1...", "🎉 party"] { #expect(try await dora.say(step) == "200 OK") }
            #expect(try await dora.say("dora smith went away", isSystemMessage: true) == "200 OK")
            // Then each arrives as committed, with the event's id and the server's date, not the app's.
            events = try await Self.roomEvents(server)
            #expect(events.count == 10)
            expected += Self.line(events[4], user: "dora smith", "hello")
            for (index, step) in ["3...", "2...", "1...", "🎉 party"].enumerated() {
                expected += Self.line(events[5 + index], user: "dora smith", step)
            }
            expected += Self.line(events[9], user: nil, "dora smith went away")
            try await room.waitForText("her messages", asLongAs: expected)
            #expect(room.text == expected)
            #expect(try ChatEvent(recorded: events[9]) == .presence(PresenceChanged(user: "dora smith", presence: .wentAway)))

            // When the backend counts down for ann on the server's clock, then the steps arrive one by one.
            let countdown = Task { try await AppBackend(store: server.store, clock: server.clock).countdown(to: "launch", user: "ann", room: "default") }
            for _ in 1...3 {
                try await clock.waitForSleepers(1)
                clock.advance(by: .seconds(1))
            }
            let recorded = try await withTimeout(.seconds(10), "the countdown to finish") { try await countdown.value }
            #expect(recorded.count == 4)
            for (event, text) in zip(recorded, ["3...", "2...", "1...", "🎉 launch"]) { expected += Self.line(event, user: "ann", text) }
            try await room.waitForText("ann's countdown", asLongAs: expected)
            #expect(room.text == expected)
            #expect(try BlabberClient.parse(room.text).messages.count == 3 + 6 + 4)
        }
    }

    @Test("activeUsers counts those seen in the last 300 s who have not gone away, the new user included")
    func activeUsers() async throws {
        try await Self.withServer(step: 100) { server, port in
            // Given ann (400 s before), bob (300 s before) speaking, carl speaking then going away.
            _ = try await AppBackend(store: server.store, clock: server.clock).chat(.say("hi"), user: "ann", room: "default")
            _ = try await AppBackend(store: server.store, clock: server.clock).chat(.say("yo"), user: "bob", room: "default")
            _ = try await AppBackend(store: server.store, clock: server.clock).chat(.say("hey"), user: "carl", room: "default")
            _ = try await AppBackend(store: server.store, clock: server.clock).chat(.presence(.wentAway), user: "carl", room: "default")
            // When dora connects 100 s after carl left.
            let room = try await BlabberClient(port: port, username: "dora").connect()
            try await room.waitForText("the status line") { $0.contains("\r\n") }
            // Then bob (exactly 300 s ago) and dora are active; ann is too old and carl went away.
            #expect(room.text.hasPrefix("{\"activeUsers\":2}\r\n"))
            let times = try await Self.roomEvents(server).map { $0.recordedAtMicroseconds / 1_000_000 }
            #expect(times.count == 5)
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 100 }, "the given: events 100 s apart")
        }
    }

    @Test("an empty room: the status counts the new user, and the connection is the only message")
    func emptyRoom() async throws {
        try await Self.withServer { server, port in
            let room = try await BlabberClient(port: port, username: "eve").connect()
            let events = try await Self.roomEvents(server)
            let expected = "{\"activeUsers\":1}\r\n" + Self.line(try #require(events.first), user: nil, "eve connected")
            try await room.waitForText("the status and the connection", asLongAs: expected)
            #expect(room.text == expected)
            #expect(events.count == 1)
        }
    }

    @Test(
        "a missing or unusable name gets a JSON 400 and records nothing",
        arguments: ["/chat/room", "/chat/room?", "/chat/room?%ZZ", "/chat/room?%07bell", "/chat/room?+"])
    func badName(uri: String) async throws {
        try await ServerFixture.with { server, client in
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                #expect(["badRequest", "invalidInput"].contains(response.object["code"] as? String))
                #expect((response.object["error"] as? String)?.isEmpty == false)
            }
            #expect(try await server.store.headPosition() == 0)
            #expect(server.openStreams.count == 0)
        }
    }

    @Test(
        "POST /chat/say refuses a body that does not decode, an empty text, or a userless text that is no system message",
        arguments: [
            "not json", "{}", #"{"id":"00000000-0000-0000-0000-000000000001","user":"ann","message":"hi","date":"2026-01-01T00:00:00Z"}"#,
            #"{"id":"00000000-0000-0000-0000-000000000001","user":"ann","message":"","date":1}"#,
            #"{"id":"00000000-0000-0000-0000-000000000001","user":"ann","message":"   ","date":1}"#,
            #"{"id":"00000000-0000-0000-0000-000000000001","message":"hello","date":1}"#,
            #"{"id":"00000000-0000-0000-0000-000000000001","user":"","message":"hello","date":1}"#,
        ])
    func badSay(body: String) async throws {
        try await ServerFixture.with { server, client in
            try await client.execute(uri: "/chat/say", method: .post, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .badRequest)
                #expect(["badRequest", "invalidInput"].contains(response.object["code"] as? String))
                #expect((response.object["error"] as? String)?.isEmpty == false)
            }
            #expect(try await server.store.headPosition() == 0)
        }
    }

    @Test("POST /chat/say records the message with the store's id and time, and answers OK")
    func say() async throws {
        try await ServerFixture.with { server, client in
            // Given the app's post with its own id and date (seconds since 2001, a JSON number).
            let body = #"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","user":"ann","message":"hi","date":12.5}"#
            try await client.execute(uri: "/chat/say", method: .post, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .ok)
                #expect(response.text == "OK")
            }
            // Then the room holds the message, with the store's id and time.
            let events = try await server.store.readStream("chat-default", from: nil, direction: .forward, limit: 10)
            #expect(events.count == 1)
            let event = try #require(events.first)
            #expect(try ChatEvent(recorded: event) == .message(MessagePosted(user: "ann", text: "hi", kind: .said)))
            #expect(event.id != UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
            #expect(event.recordedAt.timeIntervalSinceReferenceDate == 788_918_401)
        }
    }
}
