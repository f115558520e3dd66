import Hummingbird

extension Server {
    /// Live streams: GET /subscribe (Server-Sent Events or NDJSON).
    func addSubscribeRoutes(to router: Router<ServerContext>) {
    }
}
