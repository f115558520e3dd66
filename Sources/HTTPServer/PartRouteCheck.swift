import Hummingbird
import HTTPTypes

extension Server {
    /// Refuses parts whose routes the server cannot serve as they say, with
    /// ``ServerError/Code/invalidConfiguration``: two parts of one app; a route the server has
    /// already, or another part has (the router would stop the process on it); a route under
    /// `/apps` (the modules' commands) or `/console` (open without the token); a live route that
    /// is not one of the part's GET routes, or a form-labelled route not one of its POST routes.
    /// Run once the server is made: each part registers its routes on a router of its own.
    func checkPartRoutes() throws(ServerError) {
        let own = Router(context: ServerContext.self)
        addOwnRoutes(to: own)
        var taken = Set(own.routes.map { Self.routeKey($0.path, $0.method) })
        var apps: Set<String> = []
        for part in parts {
            guard apps.insert(part.app).inserted else {
                throw ServerError(.invalidConfiguration, "Two server parts are given for the app '\(part.app)'; give one, with all its routes and views.")
            }
            let router = Router(context: ServerContext.self)
            part.addRoutes(to: router, on: self)
            var methods: [String: Set<HTTPRequest.Method>] = [:]
            for route in router.routes {
                let pattern = Self.pattern(route.path)
                if pattern == "/apps" || pattern.hasPrefix("/apps/") || pattern == "/console" || pattern.hasPrefix("/console/") {
                    throw ServerError(
                        .invalidConfiguration,
                        "The app '\(part.app)' adds the route \(route.method) \(pattern.prefix(100)), under /apps or /console, which are the server's (the modules' commands, the console's open files); give it another path.")
                }
                guard taken.insert(Self.routeKey(route.path, route.method)).inserted else {
                    throw ServerError(
                        .invalidConfiguration,
                        "The app '\(part.app)' adds the route \(route.method) \(pattern.prefix(100)), which the server or another app has already; give it another path.")
                }
                methods[pattern, default: []].insert(route.method)
            }
            for (routes, method, what) in [(part.liveRoutes, HTTPRequest.Method.get, "live"), (part.formLabelledJSONRoutes, .post, "form-labelled")] {
                for path in routes.sorted() where !(methods[Self.pattern(RouterPath(path))]?.contains(method) ?? false) {
                    throw ServerError(
                        .invalidConfiguration,
                        "The app '\(part.app)' names \(path.prefix(100)) among its \(what) routes, but adds no \(method) route there.")
                }
            }
        }
    }

    /// A route's pattern as text, its captures' names left out: `/a/{id}` and `/a/{key}` are the
    /// same route to the router.
    static func pattern(_ path: RouterPath) -> String {
        path.description.replacing(/\{[^}]*\}/, with: "{}")
    }

    private static func routeKey(_ path: RouterPath, _ method: HTTPRequest.Method) -> String {
        "\(method.rawValue) \(pattern(path))"
    }
}
