import EventStore
import Hummingbird
import NIOCore
import WireFormat

extension Server {
    /// The routes whose request body streams for as long as the client sends: the connection
    /// guard times each part of their body, not the whole.
    static let streamingBodyRoutes = RoutePatterns([appendStreamPath])
    /// The path of the streamed append (``addAppendStreamRoute(to:)``).
    static let appendStreamPath = "/append/stream"

    /// POST /append/stream: appends as they come, over one request. Each NDJSON line of the body
    /// is an append of its own (the line format of `POST /append`: a stream, an event, and an
    /// optional expected version), committed durably before its answer; the response streams one
    /// NDJSON line per line read, in the same order: the line's number and the append's result,
    /// or the line's number and its error (bad JSON, a conflict, a line over `--max-body`). One
    /// line failing leaves the others alone. Blank lines are skipped; the answer ends when the
    /// body does, or when the server stops: after the line under way, or at the end of the
    /// stop's grace for a client sending nothing then (a line awaited is not cut short).
    ///
    /// Why: a request per event costs the server its HTTP machinery (parsing, routing, the
    /// middleware, a response head) each time, far more than the append. A client that streams
    /// appends over a few connections pays it once per connection.
    func addAppendStreamRoute(to router: Router<ServerContext>) {
        router.post(RouterPath(Self.appendStreamPath)) { request, context -> Response in
            _ = try RequestQuery(request, known: [])
            let lineLimit = context.maxBodyBytes
            let store = self.store
            let stopSignal = self.stopSignal
            let logger = self.logger
            return Response(
                status: .ok, headers: [.contentType: "application/x-ndjson"],
                body: ResponseBody { writer in
                    var lines = BodyLines(request.body, limit: lineLimit)
                    var number = 0
                    do {
                        while !stopSignal.isStopping, let line = try await lines.next() {
                            number += 1
                            guard let answer = await AppendStream.answer(to: line, number: number, limit: lineLimit, store: store) else { continue }
                            try await writer.write(ByteBuffer(string: answer + "\n"))
                        }
                        try await writer.finish(nil)
                    } catch {
                        // The client left, or the connection is being cut: nothing more can be written.
                        logger.debug("a streamed append ended early", metadata: ["reason": "\(error)", "lines": "\(number)"])
                    }
                })
        }
    }
}

/// What `POST /append/stream` answers each line.
enum AppendStream {
    /// The answer line for line `number` (without its newline), nil for a blank line.
    static func answer(to line: BodyLines.Line, number: Int, limit: Int, store: any EventLog) async -> String? {
        var object = JSONObjectWriter()
        object.add("line", number)
        do {
            switch line {
            case .tooLong:
                throw ServerError(.payloadTooLarge, "Line \(number) is over the server's limit of \(limit) bytes a line (--max-body); nothing of it was written.")
            case let .text(bytes):
                guard bytes.contains(where: { !isBlank($0) }) else { return nil }
                let parsed = try EventLine(bytes[...], number: number)
                let result = try await store.append(to: parsed.stream, events: [parsed.event], expectedVersion: parsed.expectedVersion ?? .any)
                AppendResponses.addMembers(of: result, to: &object)
            }
        } catch let error as any CodedError {
            object.add("status", ErrorResponses.status(error).code)
            ErrorResponses.addMembers(of: error, to: &object)
        } catch {
            object.add("status", 500)
            object.add("error", "The server failed unexpectedly: \(error).")
            object.add("code", ServerError.Code.internalError.description)
        }
        return object.finish()
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
