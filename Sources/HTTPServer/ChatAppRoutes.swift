import Apps
import Hummingbird

extension Server {
    /// The chat's commands (`esctl chat`), in any room: `POST /apps/chat/say {"user", "room"?,
    /// "text"}`, `location {"user", "room"?, "address"}`, `connect`, `away`, `back`
    /// (`{"user", "room"?}`), each answering the one message recorded; and `countdown {"user",
    /// "room"?, "text", "interval"?}`, which answers once its four messages are recorded,
    /// `interval` seconds apart on the server's clock. (The chat app's own protocol is
    /// /chat/room and /chat/say.)
    func addChatAppRoutes(to router: Router<ServerContext>) {
        let speaker: Set<String> = ["user", "room"]
        addChat(router, "say", fields: speaker.union(["text"])) { body in .say(try body.string("text")) }
        addChat(router, "location", fields: speaker.union(["address"])) { body in .shareLocation(try body.string("address")) }
        addChat(router, "connect", fields: speaker) { _ in .presence(.connected) }
        addChat(router, "away", fields: speaker) { _ in .presence(.wentAway) }
        addChat(router, "back", fields: speaker) { _ in .presence(.cameBack) }
        addAppCommand(router, "/apps/chat/countdown", fields: speaker.union(["text", "interval"])) { body in
            let user = try body.string("user")
            let room = try body.string("room", default: AppStreams.defaultKey)
            let text = try body.string("text")
            let interval = try body.double("interval", default: 1)
            // esctl allows an hour; a request held for three hours helps no client.
            guard interval >= 0, interval <= Server.maximumCountdownInterval else {
                throw ServerError(
                    .badRequest, "The interval must be from 0 to \(Int(Server.maximumCountdownInterval)) seconds (esctl chat countdown allows longer).")
            }
            let recorded = try await self.backend.countdown(
                to: text, user: user, room: room, interval: .milliseconds(Int64((interval * 1000).rounded())))
            return .events(recorded)
        }
    }

    /// The longest pause between the messages of a countdown over HTTP, in seconds.
    static let maximumCountdownInterval = 10.0

    private func addChat(
        _ router: Router<ServerContext>, _ name: String, fields: Set<String>,
        _ command: @escaping @Sendable (AppRequestBody) throws -> ChatCommand
    ) {
        addAppCommand(router, "/apps/chat/\(name)", fields: fields) { body in
            let user = try body.string("user")
            let command = try command(body)
            let event = try await self.backend.chat(command, user: user, room: try body.string("room", default: AppStreams.defaultKey))
            return .events([event])
        }
    }
}
