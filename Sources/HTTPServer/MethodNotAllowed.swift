import HTTPTypes
import Hummingbird
import Synchronization

/// The routes the server registered, by path and method: what the 405 middleware consults. Filled
/// once by ``Server/router()`` after every route is added (middleware must be added before the
/// routes it wraps, so it cannot be handed the finished list).
final class RouteTable: Sendable {
    private let routes = Mutex<[(path: RouterPath, method: HTTPRequest.Method)]>([])

    /// Records the router's routes.
    func fill(from router: Router<ServerContext>) {
        let list = router.routes.map { (path: $0.path, method: $0.method) }
        routes.withLock { $0 = list }
    }

    /// The methods registered for a route matching `path` (empty when no route matches it).
    func methods(for path: String) -> Set<HTTPRequest.Method> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return routes.withLock { routes in
            Set(routes.filter { RouteTable.matches($0.path, segments) }.map(\.method))
        }
    }

    /// Whether `route` matches a path's segments (its non-empty ones), as the router matches it.
    static func matches(_ route: RouterPath, _ segments: [Substring]) -> Bool {
        let components = route.components
        guard components.count == segments.count else { return false }
        return zip(components, segments).allSatisfy { $0 ~= $1 }
    }
}

/// A request for a route that exists with other methods answers 405 with the JSON error
/// (`code` "methodNotAllowed") and an `Allow` header listing them, instead of the router's 404;
/// a path no route has stays 404.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let table: RouteTable
    /// GET routes not answered for HEAD (``Server/liveRoutes``).
    let liveRoutes: RoutePatterns

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        // The router answers a method no route of the path takes by throwing 404 from behind
        // the middleware: only then is the table consulted, not on every request.
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let refusal = refusal(of: request) else { throw error }
            // The router's not-found responder named the route "NotFound"; a 405 is counted
            // under "unmatched" in the metrics, as before the table was consulted after it.
            context.coreContext.endpointPath.value = nil
            return refusal
        }
    }

    /// The 405 for `request` when its path has routes but none for its method; nil otherwise
    /// (no route has the path, or one takes the method and answered 404 itself).
    func refusal(of request: Request) -> Response? {
        var methods = table.methods(for: request.uri.path)
        // HeadAwareRouter answers HEAD on the GET routes that only read.
        if HeadAwareRouter.answersHead(request.uri.path, table: table, liveRoutes: liveRoutes) { methods.insert(.head) }
        guard !methods.isEmpty, !methods.contains(request.method) else { return nil }
        let allowed = methods.map(\.rawValue).sorted().joined(separator: ", ")
        var response = ErrorResponses.json(
            .methodNotAllowed, code: ServerError.Code.methodNotAllowed.description,
            message: "\(request.uri.path) does not take \(request.method.rawValue); it takes \(allowed).")
        response.headers[.allow] = allowed
        return response
    }
}
