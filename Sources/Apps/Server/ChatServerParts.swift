import AppModules
import Apps
import EventStore
import Foundation
import HTTPServer
import Hummingbird
import NIOFoundationCompat

/// The chat app's face on the server: its console view, and its original client's own protocol
/// (Blabber's; it works unchanged) on one room:
///
/// - `GET /chat/room?NAME` (the whole query string is the name, `+` a space, percent-decoded):
///   records `NAME connected`, then answers 200 `application/octet-stream` with an endless body
///   of JSON lines ending in `\r\n`: `{"activeUsers":N}`, the room's last 3 messages (the
///   new `NAME connected` among them), then each new message as it is committed. A missing
///   or unusable name: 400, nothing recorded.
/// - `POST /chat/say` with `{"id":UUID,"user":String?,"message":String,"date":Number}`:
///   records the message (the event's own id and the store's time; the body's are not kept)
///   and answers 200 `OK`. Without a user, the text must be a system message ("NAME went
///   away", "NAME came back", "NAME connected"), recorded as that presence. An empty text or
///   a body that does not decode: 400 (the original server said OK to everything).
public struct ChatServerParts: AppServerParts {
    public let app = ChatApp().name
    /// The room `/chat/room` and `/chat/say` talk to (`esctl serve --chat-room`).
    public let room: String

    public init(room: String = AppStreams.defaultKey) {
        self.room = room
    }

    public var consoleViews: [ConsoleView] {
        [ConsoleView(name: "chat", title: "Chat", script: PackageResources.chat_js, stylesheet: PackageResources.chat_css)]
    }

    /// The room's GET opens a stream and records a visit.
    public var liveRoutes: Set<String> { ["/chat/room"] }

    /// The original client (URLSession) labels its JSON with URLSession's default form encoding.
    public var formLabelledJSONRoutes: Set<String> { ["/chat/say"] }

    public var openAPI: String? { String(decoding: PackageResources.chat_protocol_yaml, as: UTF8.self) }

    public func addRoutes(to router: Router<ServerContext>, on server: Server) {
        let room = room
        router.get("/chat/room") { request, _ -> Response in
            guard let name = ChatProtocol.userName(query: request.uri.query) else {
                throw ServerError(.badRequest, "Give the user name as the whole query string: GET /chat/room?NAME.")
            }
            // The place under the cap is taken before the connection is recorded: a full server writes nothing.
            return try await server.liveResponse(to: request, contentType: "application/octet-stream") {
                let connected = try await Self.backend(on: server).chat(.presence(.connected), user: name, room: room)
                let activity = try await ChatProtocol.activity(
                    of: connected.stream, through: connected.version, now: connected.recordedAtMicroseconds,
                    lastMessages: MessagesProjection.newReaderCount, in: server.store)
                let prelude = ChatProtocol.statusLine(activeUsers: activity.activeUsers)
                    + activity.lastMessages.compactMap(ChatProtocol.line).joined()
                // Everything through the connection is in the prelude; the subscription goes on after it.
                let subscription = server.store.subscribe(
                    from: .position(connected.position + 1), filter: EventFilter(stream: connected.stream, types: ChatEvent.types))
                return LiveStreamStart(prelude: prelude, subscription: subscription, line: ChatProtocol.line)
            }
        }

        router.post("/chat/say") { request, context -> Response in
            var request = request
            let body = try await request.collectBody(context)
            let say: ChatProtocol.Say
            do {
                // A plain decoder: the app sends its date as seconds since 2001, not ISO 8601.
                say = try JSONDecoder().decode(ChatProtocol.Say.self, from: Data(buffer: body))
            } catch {
                throw ServerError(
                    .badRequest, "The body is not a chat message: send {\"id\":UUID,\"user\":String?,\"message\":String,\"date\":Number}.")
            }
            let chat = try Self.backend(on: server)
            if let user = say.user {
                _ = try await chat.chat(.say(say.message), user: user, room: room)
            } else if let system = ChatProtocol.presence(in: say.message) {
                _ = try await chat.chat(.presence(system.presence), user: system.user, room: room)
            } else {
                throw ServerError(
                    .badRequest,
                    "A message without a user must be a system message: 'NAME went away', 'NAME came back' or 'NAME connected'.")
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: "OK")))
        }
    }

    /// The chat's commands on the server's store and clock. The server checked the chat's
    /// upcasters when it was made, so none are asked for again here.
    static func backend(on server: Server) throws -> AppBackend {
        try AppBackend(AppContext(store: server.store, clock: server.clock), reaching: [:])
    }
}
