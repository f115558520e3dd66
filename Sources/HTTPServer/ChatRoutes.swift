import Hummingbird

extension Server {
    /// The chat app's own protocol: GET /chat/room, POST /chat/say.
    func addChatRoutes(to router: Router<ServerContext>) {
    }
}
