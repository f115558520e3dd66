import EventStore
import Hummingbird
import NIOCore
import WireFormat

extension Server {
    /// Deletion and retention: DELETE /streams/{stream}, GET /streams/{stream}/info,
    /// PUT /streams/{stream}/retention, POST /purge, POST /subjects/{subject}/forget; what
    /// `esctl streams`, `esctl purge` and `esctl forget` do.
    func addStreamMaintenanceRoutes(to router: Router<ServerContext>) {
        // A soft delete, or a hard one (?hard=true), guarded by the Expected-Version header.
        router.delete("/streams/{stream}") { request, context -> Response in
            let query = try RequestQuery(request, known: ["hard"])
            let stream = try context.pathParameter("stream")
            let hard: Bool
            switch query.value("hard") {
            case nil, "false": hard = false
            case "true": hard = true
            case let other?: throw ServerError(.badRequest, "The query parameter 'hard' must be true or false; '\(other)' is not one.")
            }
            let deletion = try await self.store.deleteStream(stream, expectedVersion: try LogPages.expectedVersion(request), hard: hard)
            return ErrorResponses.body(.ok, DeletionJSON.object(deletion))
        }

        router.get("/streams/{stream}/info") { request, context -> Response in
            _ = try RequestQuery(request, known: [])
            let stream = try context.pathParameter("stream")
            try Limits.validateName(stream, kind: "stream")
            guard let info = try await self.store.streamInfo(stream) else {
                throw EventStoreError(.notFound, "The stream '\(stream)' has no events; check its name (GET /events lists every event).")
            }
            return ErrorResponses.body(.ok, DeletionJSON.object(info))
        }

        // The body {"maxCount"?,"maxAgeSeconds"?,"truncateBefore"?}; {} clears the policy.
        router.put("/streams/{stream}/retention") { request, context -> Response in
            _ = try RequestQuery(request, known: [])
            let stream = try context.pathParameter("stream")
            var request = request
            let body = try await request.collectBody(context)
            let policy = try RetentionBody.policy(Array(body.readableBytesView))
            try await self.store.setRetention(policy, for: stream)
            var object = JSONObjectWriter()
            object.add("stream", stream)
            object.add("retention", rawJSON: DeletionJSON.policy(policy.isEmpty ? nil : policy))
            return ErrorResponses.body(.ok, object.finish())
        }

        router.post("/purge") { request, _ -> Response in
            _ = try RequestQuery(request, known: [])
            return ErrorResponses.body(.ok, DeletionJSON.purge(try await self.store.purge()))
        }

        // Forgets a subject, as `esctl forget --json`: repeating it answers alreadyForgotten.
        router.post("/subjects/{subject}/forget") { request, context -> Response in
            _ = try RequestQuery(request, known: [])
            let forgetting = try await self.store.forget(try context.pathParameter("subject"))
            return ErrorResponses.body(.ok, ForgettingJSON.object(forgetting))
        }
    }
}

/// The body of PUT /streams/{stream}/retention.
enum RetentionBody {
    /// The policy `{"maxCount"?,"maxAgeSeconds"?,"truncateBefore"?}` gives; 400 naming what is wrong.
    static func policy(_ bytes: [UInt8]) throws(ServerError) -> RetentionPolicy {
        let shape = "send {\"maxCount\":N,\"maxAgeSeconds\":S,\"truncateBefore\":V}, each optional and a whole number from 1 to 9223372036854775807"
        guard let value = try? JSONValue(parsing: bytes), case let .object(members) = value else {
            throw ServerError(.badRequest, "The body is not a JSON object; \(shape).")
        }
        var policy = RetentionPolicy()
        for (name, member) in members {
            guard case let .int(number) = member, number > 0 else {
                throw ServerError(.badRequest, "\"\(name)\" is not a whole number from 1 to 9223372036854775807; \(shape).")
            }
            switch name {
            case "maxCount": policy.maxCount = UInt64(number)
            case "maxAgeSeconds":
                guard number <= 3_153_600_000_000 else { throw ServerError(.badRequest, "\"maxAgeSeconds\" is over 100,000 years; give less.") }
                policy.maxAge = .seconds(number)
            case "truncateBefore": policy.truncateBefore = UInt64(number)
            default: throw ServerError(.badRequest, "\"\(name)\" is not a retention setting; \(shape).")
            }
        }
        return policy
    }
}
