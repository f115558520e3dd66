import Hummingbird

extension Server {
    /// GET /openapi.yaml and GET /metrics.
    func addDocumentRoutes(to router: Router<ServerContext>) {
    }
}
