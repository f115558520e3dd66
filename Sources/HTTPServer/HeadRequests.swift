import HTTPTypes
import Hummingbird

/// `HEAD` on every GET route that only reads (uptime checkers and link checkers use it): the
/// GET's status and headers, with its `Content-Length` when known, and no body. The live
/// routes are left out (405): their GET opens a stream, and the chat room's records a visit.
///
/// It wraps the whole router: Hummingbird picks a route by method before any middleware runs,
/// so a HEAD must arrive at the router as the GET it stands for.
struct HeadAwareRouter: HTTPResponderBuilder {
    let router: Router<ServerContext>
    let table: RouteTable

    /// GET routes whose GET does more than read.
    static let liveRoutes: Set<String> = ["/subscribe", "/chat/room"]

    /// Whether `HEAD path` is answered: a GET route that is not live.
    static func answersHead(_ path: String, table: RouteTable) -> Bool {
        !liveRoutes.contains(path) && table.methods(for: path).contains(.get)
    }

    func buildResponder() -> Responder {
        Responder(inner: router.buildResponder(), table: table)
    }

    struct Responder: HTTPResponder {
        typealias Context = ServerContext
        let inner: RouterResponder<ServerContext>
        let table: RouteTable

        func respond(to request: Request, context: ServerContext) async throws -> Response {
            guard request.method == .head, HeadAwareRouter.answersHead(request.uri.path, table: table) else {
                return try await inner.respond(to: request, context: context)
            }
            var head = request.head
            head.method = .get
            var response = try await inner.respond(to: Request(head: head, body: request.body), context: context)
            let length = response.body.contentLength
            response.body = ResponseBody()
            response.headers[.contentLength] = length.map(String.init)
            return response
        }
    }
}
