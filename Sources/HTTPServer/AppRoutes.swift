import Hummingbird

extension Server {
    /// The apps' commands: POST /apps/....
    func addAppRoutes(to router: Router<ServerContext>) {
    }
}
