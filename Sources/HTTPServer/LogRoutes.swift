import EventStore
import Hummingbird
import NIOCore
import WireFormat

extension Server {
    /// The log: POST /streams/{stream}, POST /append, GET /streams/{stream}, GET /events, GET /stats.
    func addLogRoutes(to router: Router<ServerContext>) {
        // A JSON array of events for one stream, guarded by the Expected-Version header.
        router.post("/streams/{stream}") { request, context -> Response in
            _ = try RequestQuery(request, known: [])
            let stream = try context.pathParameter("stream")
            try Limits.validateName(stream, kind: "stream")
            let expected = try LogPages.expectedVersion(request)
            var request = request
            let body = try await request.collectBody(context)
            let events = try EventArray.events(Array(body.readableBytesView), stream: stream)
            let result = try await self.store.append(to: stream, events: events, expectedVersion: expected)
            return AppendResponses.response([result], asArray: false)
        }

        // NDJSON lines as `esctl append --batch` takes them, in one atomic append.
        router.post("/append") { request, context -> Response in
            _ = try RequestQuery(request, known: [])
            var request = request
            let body = try await request.collectBody(context)
            let batch = try EventBatch.read(ndjson: Array(body.readableBytesView))
            let results = try await self.store.append(batch.appends)
            return AppendResponses.response(results, asArray: true)
        }

        // One page of a stream, never more than LogPages.maximumLimit events.
        router.get("/streams/{stream}") { request, context -> Response in
            let query = try RequestQuery(request, known: ["from", "limit", "direction"])
            let stream = try context.pathParameter("stream")
            let from = try query.unsigned("from", what: "a version")
            let limit = try query.whole("limit", in: 0...LogPages.maximumLimit) ?? LogPages.defaultLimit
            let direction: ReadDirection
            switch query.value("direction") {
            case nil, "forward": direction = .forward
            case "backward": direction = .backward
            case let other?:
                throw ServerError(.badRequest, "The query parameter 'direction' must be forward or backward; '\(other)' is not one.")
            }
            guard try await self.store.streamVersion(stream) > 0 else {
                throw EventStoreError(.notFound, "The stream '\(stream)' has no events; check its name (GET /events lists every event).")
            }
            // Read and written about a chunk's bytes at a time: a page of large events never
            // sits in memory whole.
            guard let pages = self.store as? any StreamPageReads else {
                return LogPages.ndjson(try await self.store.readStream(stream, from: from, direction: direction, limit: limit))
            }
            return try await LogPages.streamed(limit: limit) { last, count in
                var start = from
                if let last {
                    switch direction {
                    case .forward: start = last.version &+ 1
                    case .backward:
                        guard last.version > 1 else { return [] }
                        start = last.version - 1
                    }
                }
                return try await pages.readStream(stream, from: start, direction: direction, limit: count, byteLimit: LogPages.chunkBytes)
            }
        }

        // One page of the global log, filtered, never more than LogPages.maximumLimit events, and
        // never more than LogPages.scanLimit positions examined: when the page stops before `to`
        // and the head, `Next-From: P` says where the next page starts.
        router.get("/events") { request, _ -> Response in
            let query = try RequestQuery(request, known: ["from", "to", "type", "category", "limit"], repeatable: ["type"])
            try query.refuseEmptyValues()
            let from = try query.unsigned("from", what: "a position") ?? 1
            let to = try query.unsigned("to", what: "a position") ?? .max
            guard to >= from else {
                throw ServerError(.badRequest, "The query parameter 'to' (\(to)) is before 'from' (\(from)); give a range whose end is not before its start.")
            }
            let limit = try query.whole("limit", in: 0...LogPages.maximumLimit) ?? LogPages.defaultLimit
            let category = try query.category()
            let types = query.values("type")
            let filter = EventFilter(category: category, types: types.isEmpty ? nil : Set(types))
            guard limit > 0 else { return LogPages.ndjson([]) }
            let start = max(from, 1)
            guard let source = self.store as? any SubscriptionSource else {
                return LogPages.ndjson(try await self.store.read(from: start, through: to, limit: limit, filter: filter))
            }
            // A filter that matches rarely must not walk the whole log in one request, nor large
            // events fill memory: the page examines a bounded number of positions and holds a
            // bounded number of bytes, and says where to go on.
            let page = try await source.readPage(
                from: start, through: to, limit: limit, byteLimit: LogPages.pageBytes, scanLimit: max(limit, LogPages.scanLimit),
                filter: filter)
            var response = LogPages.ndjson(page.events)
            if page.scannedThrough < to, page.scannedThrough < (try await self.store.headPosition()) {
                response.headers[.nextFrom] = String(page.scannedThrough + 1)
            }
            return response
        }

        // What `esctl stats --json` prints.
        router.get("/stats") { request, _ -> Response in
            _ = try RequestQuery(request, known: [])
            let stats = try await self.store.statistics()
            return ErrorResponses.body(.ok, StatisticsJSON.object(stats, location: self.store.location))
        }
    }
}

/// The shapes of the log routes' answers and the bounds of their pages.
enum LogPages {
    /// The events a page holds when the request gives no `limit`.
    static let defaultLimit = 1000
    /// The most a page holds: a read never walks a whole large stream or log.
    static let maximumLimit = 10_000
    /// The most positions one `GET /events` page examines (more when its limit is larger).
    static let scanLimit = 10_000
    /// The most stored bytes one `GET /events` page holds (or one event, when it is larger): a
    /// page that would pass it ends early, with `Next-From`.
    static let pageBytes = 4 << 20
    /// The most stored bytes one chunk of a streamed answer holds (or one event, when larger).
    static let chunkBytes = 1 << 20
    /// The most events one chunk of a streamed answer holds.
    static let chunkEvents = 256

    /// Events as NDJSON (`application/x-ndjson`), one ``EventJSON/line(_:)`` each, 200, written
    /// an event at a time as the socket takes them (the page is held, not its text).
    static func ndjson(_ events: [RecordedEvent]) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/x-ndjson"],
            body: ResponseBody { writer in
                for event in events { try await writer.write(line(event)) }
                try await writer.finish(nil)
            })
    }

    /// An NDJSON answer of up to `limit` events read a chunk at a time: `read(last, count)` gives
    /// up to `count` events after `last` (nil: the first chunk), bounded in bytes by the reader;
    /// an empty chunk ends the answer. The first chunk is read before the status is sent, so its
    /// errors are the answer; a later failure cuts the connection before the answer's end, which
    /// a client sees as an error, never as a short page.
    static func streamed(
        limit: Int, read: @escaping @Sendable (_ last: RecordedEvent?, _ count: Int) async throws -> [RecordedEvent]
    ) async throws -> Response {
        let first = limit > 0 ? try await read(nil, min(limit, chunkEvents)) : []
        return Response(
            status: .ok, headers: [.contentType: "application/x-ndjson"],
            body: ResponseBody { writer in
                var chunk = first
                var delivered = 0
                while let last = chunk.last {
                    for event in chunk { try await writer.write(line(event)) }
                    delivered += chunk.count
                    guard delivered < limit else { break }
                    chunk = try await read(last, min(limit - delivered, chunkEvents))
                }
                try await writer.finish(nil)
            })
    }

    /// One event's NDJSON line.
    private static func line(_ event: RecordedEvent) -> ByteBuffer {
        var buffer = ByteBuffer(string: EventJSON.line(event))
        buffer.writeString("\n")
        return buffer
    }

    /// The `Expected-Version` header (`any` when absent). Throws ``ServerError`` with
    /// ``ServerError/Code/badRequest`` for anything but `any`, `no-stream`, `exists` or a number.
    static func expectedVersion(_ request: Request) throws(ServerError) -> ExpectedVersion {
        guard let text = request.headers[.expectedVersion] else { return .any }
        guard let expected = ExpectedVersion(text: text) else {
            throw ServerError(.badRequest, ExpectedVersion.refusal(of: text, as: "The Expected-Version header"))
        }
        return expected
    }
}

/// The answers of the appending routes.
enum AppendResponses {
    /// `{"stream","version","positions":[...],"alreadyRecorded"}` for one append part.
    static func object(_ result: AppendResult) -> String {
        var object = JSONObjectWriter()
        addMembers(of: result, to: &object)
        return object.finish()
    }

    /// The members of ``object(_:)`` added to `object` (a streamed answer's line puts its line
    /// number first).
    static func addMembers(of result: AppendResult, to object: inout JSONObjectWriter) {
        object.add("stream", result.stream)
        object.add("version", result.version)
        object.add("positions", rawJSON: "[" + result.positions.map(String.init).joined(separator: ",") + "]")
        object.add("alreadyRecorded", result.alreadyRecorded)
        if result.deleted { object.add("deleted", true) }
    }

    /// 201 when anything was written, 200 when every event was already recorded (an idempotent
    /// retry); the body is one object, or with `asArray` an array of them in the order of `results`.
    static func response(_ results: [AppendResult], asArray: Bool) -> Response {
        let status: HTTPResponse.Status = results.allSatisfy(\.alreadyRecorded) ? .ok : .created
        let objects = results.map(object)
        let json = asArray ? "[" + objects.joined(separator: ",") + "]" : objects.first ?? "{}"
        return ErrorResponses.body(status, json)
    }
}
