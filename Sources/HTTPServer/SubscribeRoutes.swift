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
    /// `limit=N` ends the response after N events. Bad parameters: 400 before anything streams.
    func addSubscribeRoutes(to router: Router<ServerContext>) {
        router.get("/subscribe") { request, _ -> Response in
            let query = try SubscribeQuery(request.uri.queryParameters, lastEventID: request.headers[.lastEventID])
            let subscription = self.store.subscribe(from: query.start, filter: query.filter).withProgress
            let isEventStream = request.headers[values: .accept].contains { $0.lowercased().contains("text/event-stream") }
            let format = isEventStream ? SubscribeFormat.serverSentEvents : SubscribeFormat.ndjson
            let stream = LiveStream(subscription: subscription, format: format, limit: query.limit)
            return Response(
                status: .ok,
                headers: [.contentType: isEventStream ? "text/event-stream" : "application/x-ndjson", .cacheControl: "no-cache", .connection: "close"],
                body: stream.body(for: request, on: self))
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

    static let usage = "GET /subscribe takes from=P|start|end, stream=S, category=C, type=T (repeatable) and limit=N"

    /// Reads `parameters` and a `Last-Event-ID` header (which wins over `from`). Throws
    /// ``ServerError`` (400) for an unknown or repeated parameter, an empty value, a `from`
    /// that is not a position, `start` or `end`, a limit that is not a whole number of at least
    /// 1, a category with a '-' inside, or a `Last-Event-ID` that is not a position.
    init<Parameters: Sequence<(key: Substring, value: Substring)>>(_ parameters: Parameters, lastEventID: String?) throws(ServerError) {
        var seen: Set<Substring> = []
        var types: Set<String> = []
        for (key, value) in parameters {
            guard ["from", "stream", "category", "type", "limit"].contains(key) else {
                throw ServerError(.badRequest, "Unknown parameter '\(key)': \(Self.usage).")
            }
            guard key == "type" || seen.insert(key).inserted else {
                throw ServerError(.badRequest, "The parameter '\(key)' is given twice; give it once.")
            }
            guard !value.isEmpty else {
                throw ServerError(.badRequest, "The parameter '\(key)' is empty; \(Self.usage).")
            }
            switch key {
            case "from":
                start = try Self.start(String(value))
            case "stream":
                filter.stream = String(value)
            case "category":
                guard EventFilter(category: String(value)).category?.contains("-") != true else {
                    throw ServerError(
                        .badRequest,
                        "A category is the part of a stream name before its first '-', so '\(value)' names none.")
                }
                filter.category = String(value)
            case "type":
                types.insert(String(value))
            default:
                guard let number = Self.number(value), number >= 1, number <= UInt64(Int.max) else {
                    throw ServerError(.badRequest, "The limit '\(value)' is not a whole number of at least 1.")
                }
                limit = Int(number)
            }
        }
        if !types.isEmpty { filter.types = types }
        if let lastEventID {
            let text = lastEventID.trimmingCharacters(in: .whitespaces)
            guard let position = Self.number(text[...]) else {
                throw ServerError(.badRequest, "The Last-Event-ID '\(lastEventID)' is not an event position.")
            }
            let (next, overflow) = position.addingReportingOverflow(1)
            guard !overflow else {
                throw ServerError(.badRequest, "The Last-Event-ID '\(lastEventID)' is past every position.")
            }
            start = .position(next)
        }
    }

    /// `start`, `end` or a position (inclusive).
    static func start(_ text: String) throws(ServerError) -> SubscriptionStart {
        switch text {
        case "start": return .start
        case "end": return .end
        default:
            guard let position = number(text[...]) else {
                throw ServerError(.badRequest, "The parameter from='\(text)' is not a position, 'start' or 'end'.")
            }
            return .position(position)
        }
    }

    /// Digits only (no sign, no spaces), as a UInt64; nil otherwise.
    static func number(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return UInt64(text)
    }
}
