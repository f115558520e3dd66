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
    /// The response for `error`, which a route or middleware threw: every error of ours says its
    /// own status, code and details (``CodedError``); Hummingbird's refusals are put in our shape.
    static func response(for error: any Error) -> Response {
        switch error {
        case let error as HTTPError:
            return response(for: error)
        case let error as any CodedError:
            var response = shaped(error)
            if let error = error as? ServerError {
                // A cap that is full, or a stop under way: a client may come back shortly.
                if error.code == .unavailable { response.headers[.retryAfter] = "1" }
                if error.code == .tooManyRequests { response.headers[.retryAfter] = String(TokenThrottle.window.components.seconds) }
            }
            if let error = error as? EventStoreError, error.code == .versionConflict, let first = error.conflicts.first {
                response.headers[HTTPField.Name.currentVersion] = String(first.actual)
            }
            return response
        default:
            return json(.internalServerError, code: ServerError.Code.internalError.description, message: "The server failed unexpectedly: \(error).")
        }
    }

    /// `{"error": SENTENCE, "code": CODE, ...details}` with the error's own status.
    private static func shaped(_ error: any CodedError) -> Response {
        var object = JSONObjectWriter()
        addMembers(of: error, to: &object)
        return body(status(error), object.finish())
    }

    /// The members of an error's JSON (`error`, `code`, its details) added to `object`: the same
    /// shape in a response and in a line of a streamed answer.
    static func addMembers(of error: any CodedError, to object: inout JSONObjectWriter) {
        object.add("error", error.message)
        object.add("code", error.codeName)
        for (key, value) in error.details { object.add(key, rawJSON: value.description) }
    }

    /// The error's HTTP status; one that is not an error's (an app module's may say anything)
    /// answers 500, never a trap on a code outside 0...999.
    static func status(_ error: any CodedError) -> HTTPResponse.Status {
        let code = error.httpStatus
        return HTTPResponse.Status(code: (400...599).contains(code) ? code : 500)
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
