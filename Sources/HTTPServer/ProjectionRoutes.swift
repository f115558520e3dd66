import Hummingbird

extension Server {
    /// Projections: GET /projections, GET /projections/{name}, POST /projections/{name}/rebuild.
    func addProjectionRoutes(to router: Router<ServerContext>) {
    }
}
