import Hummingbird

extension Server {
    /// The log: POST /streams/{stream}, POST /append, GET /streams/{stream}, GET /events, GET /stats.
    func addLogRoutes(to router: Router<ServerContext>) {
    }
}
