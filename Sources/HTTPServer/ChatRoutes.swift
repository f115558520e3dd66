import Apps
import EventStore
import Foundation
import Hummingbird
import NIOFoundationCompat

extension Server {
    /// The chat app's own protocol (its original client works unchanged), on the room
    /// ``ServerOptions/chatRoom``:
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
    func addChatRoutes(to router: Router<ServerContext>) {
        guard let chat else { return }
        router.get("/chat/room") { request, _ -> Response in
            guard let name = ChatProtocol.userName(query: request.uri.query) else {
                throw ServerError(.badRequest, "Give the user name as the whole query string: GET /chat/room?NAME.")
            }
            // Refused before the connection is recorded: a full server writes nothing.
            let slot = try self.streamCap.reserve()
            let room = self.options.chatRoom
            let connected = try await chat.chat(.presence(.connected), user: name, room: room)
            let activity = try await ChatProtocol.activity(
                of: connected.stream, through: connected.version, now: connected.recordedAtMicroseconds,
                lastMessages: MessagesProjection.newReaderCount, in: self.store)
            let prelude = ChatProtocol.statusLine(activeUsers: activity.activeUsers)
                + activity.lastMessages.compactMap(ChatProtocol.line).joined()
            // Everything through the connection is in the prelude; the subscription goes on after it.
            let subscription = self.store.subscribe(
                from: .position(connected.position + 1), filter: EventFilter(stream: connected.stream, types: ChatEvent.types))
            let stream = LiveStream(
                subscription: subscription.withProgress, format: LiveStreamFormat(event: ChatProtocol.line), prelude: prelude)
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream", .cacheControl: "no-cache", .connection: "close"],
                body: stream.body(for: request, on: self, holding: slot))
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
            let room = self.options.chatRoom
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
}
