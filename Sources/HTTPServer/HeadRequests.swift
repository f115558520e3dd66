import HTTPTypes
import Hummingbird

/// `HEAD` on every GET route that only reads (uptime checkers and link checkers use it): the
/// GET's status and headers, with its `Content-Length` when known, and no body. The live
/// routes are left out (405): their GET opens a stream (and an app's may record something).
///
/// It wraps the whole router: Hummingbird picks a route by method before any middleware runs,
/// so a HEAD must arrive at the router as the GET it stands for.
struct HeadAwareRouter: HTTPResponderBuilder {
    let router: Router<ServerContext>
    let table: RouteTable
    /// GET routes whose GET does more than read (``Server/liveRoutes``).
    let liveRoutes: RoutePatterns

    /// Whether `HEAD path` is answered: a GET route that is not live.
    static func answersHead(_ path: String, table: RouteTable, liveRoutes: RoutePatterns) -> Bool {
        !liveRoutes.matches(path) && table.methods(for: path).contains(.get)
    }

    func buildResponder() -> Responder {
        Responder(inner: router.buildResponder(), table: table, liveRoutes: liveRoutes)
    }

    struct Responder: HTTPResponder {
        typealias Context = ServerContext
        let inner: RouterResponder<ServerContext>
        let table: RouteTable
        let liveRoutes: RoutePatterns

        func respond(to request: Request, context: ServerContext) async throws -> Response {
            guard request.method == .head, HeadAwareRouter.answersHead(request.uri.path, table: table, liveRoutes: liveRoutes) else {
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

/// Routes given by their patterns (the live GET routes, the form-labelled POST routes), matched
/// as the router matches a path: empty segments ignored (`//rooms/live/` is `/rooms/live`),
/// `{name}` capturing one segment. A HEAD the router would route to a live GET must not run it.
struct RoutePatterns: Sendable {
    let patterns: [RouterPath]

    init(_ paths: Set<String>) {
        patterns = paths.sorted().map { RouterPath($0) }
    }

    /// Whether a request's path is one of these routes.
    func matches(_ path: String) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return patterns.contains { RouteTable.matches($0, segments) }
    }
}
