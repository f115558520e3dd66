import EventStore
import Foundation
import Hummingbird
import WireFormat

extension Server {
    /// Live streams: `GET /subscribe?from=P|start|end&stream=S&category=C&type=T&limit=N`.
    ///
    /// With `Accept: text/event-stream`, Server-Sent Events: each event as `id: POSITION` and
    /// `data: EVENT`, one `event: caughtUp` (`data: {"through":P}`) when catch-up turns live,
    /// `: heartbeat` after each heartbeat interval of the server's clock without an event, and
    /// `event: error` with the JSON error if the store closes. Otherwise NDJSON, one event per
    /// line. Events are the objects of `esctl replay --json`. `from` (inclusive; default `end`)
    /// yields to a `Last-Event-ID` header, which resumes after that position; `type` may repeat;
    /// `limit=N` ends the response after N events. Bad parameters: 400 before anything streams;
    /// past ``ServerOptions/maxSubscribers`` open streams, 503.
    func addSubscribeRoutes(to router: Router<ServerContext>) {
        router.get("/subscribe") { request, _ -> Response in
            let query = try SubscribeQuery(request)
            let slot = try self.streamCap.reserve()
            let subscription = self.store.subscribe(from: query.start, filter: query.filter).withProgress
            let isEventStream = request.headers[values: .accept].contains { $0.lowercased().contains("text/event-stream") }
            let format = isEventStream ? SubscribeFormat.serverSentEvents : SubscribeFormat.ndjson
            let stream = LiveStream(subscription: subscription, format: format, limit: query.limit)
            return Response(
                status: .ok,
                headers: [.contentType: isEventStream ? "text/event-stream" : "application/x-ndjson", .cacheControl: "no-cache", .connection: "close"],
                body: stream.body(for: request, on: self, holding: slot))
        }
    }
}

/// The texts of `/subscribe`'s two formats.
enum SubscribeFormat {
    /// Server-Sent Events.
    static let serverSentEvents = LiveStreamFormat(
        event: { event in "id: \(event.position)\ndata: \(EventJSON.line(event))\n\n" },
        caughtUp: { through in "event: caughtUp\ndata: {\"through\":\(through)}\n\n" },
        heartbeat: ": heartbeat\n\n",
        failure: { error in "event: error\ndata: \(SubscribeFormat.errorJSON(error))\n\n" })

    /// One event JSON per line.
    static let ndjson = LiveStreamFormat(event: { event in EventJSON.line(event) + "\n" })

    /// `{"error": SENTENCE, "code": CODE}` for a failure after the status was sent.
    static func errorJSON(_ error: any Error) -> String {
        var object = JSONObjectWriter()
        if let error = error as? EventStoreError {
            object.add("error", error.message)
            object.add("code", error.code.description)
        } else {
            object.add("error", "The stream failed: \(error).")
            object.add("code", ServerError.Code.internalError.description)
        }
        return object.finish()
    }
}

/// The parameters of `GET /subscribe`, checked: where to start, which events, how many.
struct SubscribeQuery {
    var start: SubscriptionStart = .end
    var filter = EventFilter.all
    var limit: Int?

    /// Reads `request`'s query and its `Last-Event-ID` header (which wins over `from`). Throws
    /// ``ServerError`` (400) for what ``RequestQuery`` refuses (an unknown or repeated
    /// parameter), an empty value, a `from` that is not a position, `start` or `end`, a limit
    /// that is not a whole number of at least 1, a category with a '-' inside, or a
    /// `Last-Event-ID` that is not a position.
    init(_ request: Request) throws(ServerError) {
        let query = try RequestQuery(request, known: ["from", "stream", "category", "type", "limit"], repeatable: ["type"])
        try query.refuseEmptyValues()
        switch query.value("from") {
        case nil, "end"?: start = .end
        case "start"?: start = .start
        case let text?:
            guard let position = RequestQuery.number(text) else {
                throw ServerError(.badRequest, "The query parameter 'from' must be a position, 'start' or 'end'; '\(text)' is not one.")
            }
            start = .position(position)
        }
        filter.stream = query.value("stream")
        filter.category = try query.category()
        let types = query.values("type")
        if !types.isEmpty { filter.types = Set(types) }
        limit = try query.whole("limit", in: 1...Int.max)
        if let lastEventID = request.headers[.lastEventID] {
            let text = lastEventID.trimmingCharacters(in: .whitespaces)
            guard let position = RequestQuery.number(text) else {
                throw ServerError(.badRequest, "The Last-Event-ID '\(lastEventID)' is not an event position.")
            }
            let (next, overflow) = position.addingReportingOverflow(1)
            guard !overflow else {
                throw ServerError(.badRequest, "The Last-Event-ID '\(lastEventID)' is past every position.")
            }
            start = .position(next)
        }
    }
}
