import Apps
import Commands
import EventStore
import HTTPTypes
import Hummingbird
import NIOCore
import Projections
import WireFormat

/// Every failure as the API's JSON: `{"error": SENTENCE, "code": CODE}` with a fitting status. A
/// version conflict adds `stream`, `expected`, `actual` (and `conflicts`, one per stream) and the
/// stream's version in a `Current-Version` header.
enum ErrorResponses {
    /// The response for `error`, which a route or middleware threw.
    static func response(for error: any Error) -> Response {
        switch error {
        case let error as ServerError:
            var response = json(error.code.status, code: error.code.description, message: error.message)
            // A cap that is full, or a stop under way: a client may come back shortly.
            if error.code == .unavailable { response.headers[.retryAfter] = "1" }
            if error.code == .tooManyRequests { response.headers[.retryAfter] = String(TokenThrottle.window.components.seconds) }
            return response
        case let error as EventStoreError:
            return response(for: error)
        case let error as AppError:
            return json(status(for: error.code), code: error.code.description, message: error.message)
        case let error as WireFormatError:
            return json(.badRequest, code: error.code.description, message: error.message)
        case let error as ProjectionError:
            return json(status(for: error.code), code: error.code.description, message: error.message)
        case let error as HTTPError:
            return response(for: error)
        case let error as CommandError:
            // Other writers kept changing the streams (409), or a decided event cannot be encoded (400).
            return json(error.code == .conflict ? .conflict : .badRequest, code: error.code.description, message: error.message)
        default:
            return json(.internalServerError, code: ServerError.Code.internalError.description, message: "The server failed unexpectedly: \(error).")
        }
    }

    /// The store's codes: conflicts 409, a tombstoned stream 410, missing things 404, bad input 400, a closed or
    /// unavailable store 503, a damaged or full one 500.
    static func response(for error: EventStoreError) -> Response {
        let status: HTTPResponse.Status
        switch error.code {
        case .invalidInput: status = .badRequest
        case .versionConflict, .idempotencyConflict, .alreadyProcessed, .conditionFailed: status = .conflict
        case .streamTombstoned: status = .gone
        case .notFound: status = .notFound
        case .closed, .storeUnavailable: status = .serviceUnavailable
        default: status = .internalServerError
        }
        guard error.code == .versionConflict, let first = error.conflicts.first else {
            return json(status, code: error.code.description, message: error.message)
        }
        var object = JSONObjectWriter()
        object.add("error", error.message)
        object.add("code", error.code.description)
        object.add("stream", first.stream)
        object.add("expected", first.expected.text)
        object.add("actual", first.actual)
        let conflicts = error.conflicts.map { conflict in
            var item = JSONObjectWriter()
            item.add("stream", conflict.stream)
            item.add("expected", conflict.expected.text)
            item.add("actual", conflict.actual)
            return item.finish()
        }
        object.add("conflicts", rawJSON: "[" + conflicts.joined(separator: ",") + "]")
        var response = body(status, object.finish())
        response.headers[HTTPField.Name.currentVersion] = String(first.actual)
        return response
    }

    /// Hummingbird's own refusals (no route, a body over the limit, a bad request) in our shape.
    static func response(for error: HTTPError) -> Response {
        let code: ServerError.Code
        switch error.status {
        case .notFound: code = .notFound
        case .contentTooLarge: code = .payloadTooLarge
        case .methodNotAllowed: code = .methodNotAllowed
        case .unauthorized: code = .unauthorized
        case .unsupportedMediaType: code = .unsupportedMediaType
        case .notAcceptable: code = .notAcceptable
        case .serviceUnavailable: code = .unavailable
        default: code = error.status.code >= 500 ? .internalError : .badRequest
        }
        let message: String
        switch (code.base, error.body) {
        case (_, let body?) where !body.isEmpty: message = body.hasSuffix(".") ? body : body + "."
        case (.notFound, _): message = "There is no such route; see GET /openapi.yaml for the API."
        case (.payloadTooLarge, _): message = "The request body is over the server's limit (--max-body); send less."
        default: message = "The request was refused (\(error.status.code) \(error.status.reasonPhrase))."
        }
        return json(error.status, code: code.description, message: message)
    }

    static func status(for code: AppError.Code) -> HTTPResponse.Status {
        switch code.base {
        case .invalidInput: return .badRequest
        case .notFound: return .notFound
        case .goalNotSet, .invalidState, .duplicate, .recordedInvalid: return .unprocessableContent
        }
    }

    static func status(for code: ProjectionError.Code) -> HTTPResponse.Status {
        switch code.base {
        case .unknownProjection: return .notFound
        case .invalidDefinition, .invalidQuery: return .badRequest
        case .stopped, .notCaughtUp: return .serviceUnavailable
        // A client's precondition (a state at least as recent as minPosition) not met in time:
        // the server did not fail, so not a 5xx.
        case .timedOut: return .preconditionFailed
        case .damagedState: return .internalServerError
        }
    }

    /// `{"error": message, "code": code}` with `status`.
    static func json(_ status: HTTPResponse.Status, code: String, message: String) -> Response {
        var object = JSONObjectWriter()
        object.add("error", message)
        object.add("code", code)
        return body(status, object.finish())
    }

    /// A JSON body with `status`.
    static func body(_ status: HTTPResponse.Status, _ json: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: json + "\n")))
    }
}

extension HTTPField.Name {
    // The names are valid tokens; HTTPField.Name(_:) returns nil only for invalid ones.
    static let currentVersion = HTTPField.Name("Current-Version") ?? .contentType
    static let expectedVersion = HTTPField.Name("Expected-Version") ?? .contentType
    static let lastEventID = HTTPField.Name("Last-Event-ID") ?? .contentType
    static let nextFrom = HTTPField.Name("Next-From") ?? .contentType
}
