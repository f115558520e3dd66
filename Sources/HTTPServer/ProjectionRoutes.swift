import EventStore
import Hummingbird
import Projections
import WireFormat

extension Server {
    /// Projections: GET /projections, GET /projections/{name}, POST /projections/{name}/rebuild.
    func addProjectionRoutes(to router: Router<ServerContext>) {
        // Where each stands, as it stands (nothing is caught up): `esctl projections --json`'s
        // objects as one array.
        router.get("/projections") { request, _ -> Response in
            _ = try RequestQuery(request, known: [])
            let statuses = try await self.runner.statuses()
            return ErrorResponses.body(.ok, "[" + statuses.map(ProjectionJSON.status).joined(separator: ",") + "]")
        }

        // The body of `esctl query NAME --json`.
        router.get("/projections/{name}") { request, context -> Response in
            let name = try context.pathParameter("name")
            // An unknown projection is a 404 before its parameters are looked at.
            let projection = try self.runner.projection(named: name)
            let query = try RequestQuery(request, known: nil)
            let asOf = try query.unsigned("asOf", what: "a position")
            let minPosition = try query.unsigned("minPosition", what: "a position")
            let timeout = try query.seconds("timeout", in: ProjectionQueries.timeoutRange)
            if asOf != nil && minPosition != nil {
                throw ServerError(.badRequest, "Give 'asOf' (a state of the past) or 'minPosition' (a state at least this recent), not both.")
            }
            if timeout != nil && minPosition == nil {
                throw ServerError(.badRequest, "The query parameter 'timeout' bounds the wait of 'minPosition'; give 'minPosition' with it.")
            }
            var parameters: [String: String] = [:]
            for (key, value) in query.pairs where !ProjectionQueries.reserved.contains(key) {
                parameters[key] = value
            }
            let result: JSONValue
            if let minPosition {
                // A wait ends when its client leaves: its connection (a descriptor) and its
                // waiter would otherwise stay until the timeout, up to 300 s.
                let queryParameters = QueryParameters(parameters)
                // A stop ends it with 503 at once, rather than holding the stop for the grace.
                let runner = self.runner
                result = try await self.waitCap.hold {
                    try await request.body.consumeWithCancellationOnInboundClose { _ in
                        try await self.stopSignal.endingOnStop {
                            try await runner.query(
                                projection.name, parameters: queryParameters, minPosition: minPosition,
                                timeout: timeout ?? ProjectionQueries.defaultTimeout)
                        }
                    }
                }
            } else {
                result = try await self.runner.query(projection.name, parameters: QueryParameters(parameters), asOf: asOf)
            }
            return ErrorResponses.body(.ok, result.serialized)
        }

        // What `esctl rebuild NAME --json` does, answered with its report.
        router.post("/projections/{name}/rebuild") { request, context -> Response in
            _ = try RequestQuery(request, known: [])
            let name = try context.pathParameter("name")
            let projection = try self.runner.projection(named: name)
            guard let report = try await self.runner.rebuild([projection.name]).first else {
                throw ServerError(.internalError, "The rebuild of '\(name)' reported nothing.")
            }
            return ErrorResponses.body(.ok, ProjectionJSON.report(report))
        }
    }
}

/// The parameters of `GET /projections/{name}` that are the route's own, not the projection's.
enum ProjectionQueries {
    /// `asOf`, `minPosition` and `timeout`; every other parameter is the projection's.
    static let reserved: Set<String> = ["asOf", "minPosition", "timeout"]
    /// How long `minPosition` waits when no `timeout` is given.
    static let defaultTimeout = Duration.seconds(5)
    /// The waits a request may ask for, in seconds: long enough for a slow catch-up, short
    /// enough that a forgotten request does not hold a connection for hours.
    static let timeoutRange: ClosedRange<Double> = 0.001...300
}
