import EventStoreCore
import Hummingbird

/// The one error type of the HTTPServer module: a request the server refuses, or options it
/// cannot serve with. Each code has its HTTP status; the body is `{"error": SENTENCE, "code": CODE}`.
public struct ServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal this is; a struct so that codes can be added without breaking a
    /// program's `switch`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        package enum Base: String, Sendable, CaseIterable {
            case badRequest, unauthorized, forbidden, notFound, methodNotAllowed, notAcceptable, payloadTooLarge,
                unsupportedMediaType, misdirected, requestTimeout, tooManyRequests, invalidConfiguration, unavailable, internalError
        }

        package let base: Base

        package init(_ base: Base) {
            self.base = base
        }

        /// The request is malformed: a parameter, a header or a body the route does not take (400).
        public static let badRequest = Code(.badRequest)
        /// The server has a token and the request did not carry it (401).
        public static let unauthorized = Code(.unauthorized)
        /// A web page of another origin sent the request (403).
        public static let forbidden = Code(.forbidden)
        /// The request's `Host` does not name this server, as a DNS-rebinding page's does (421).
        public static let misdirected = Code(.misdirected)
        /// No such route (404); a stream or projection that does not exist uses the store's codes.
        public static let notFound = Code(.notFound)
        /// The route exists for other methods (405).
        public static let methodNotAllowed = Code(.methodNotAllowed)
        /// The route cannot answer in a type the request accepts (406).
        public static let notAcceptable = Code(.notAcceptable)
        /// The body is over the limit (413).
        public static let payloadTooLarge = Code(.payloadTooLarge)
        /// The body's content type is not one the route reads (415).
        public static let unsupportedMediaType = Code(.unsupportedMediaType)
        /// The request's body did not arrive within the body timeout (408); the connection closes.
        public static let requestTimeout = Code(.requestTimeout)
        /// Too many wrong tokens came from the client's address lately (429); wait and retry.
        public static let tooManyRequests = Code(.tooManyRequests)
        /// The server's options cannot be served with (a non-loopback host without a token).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The server is stopping or the store is closed (503).
        public static let unavailable = Code(.unavailable)
        /// An unexpected failure (500).
        public static let internalError = Code(.internalError)

        public var description: String { base.rawValue }

        /// The HTTP status this code answers with.
        public var status: HTTPResponse.Status {
            switch base {
            case .badRequest, .invalidConfiguration: return .badRequest
            case .unauthorized: return .unauthorized
            case .forbidden: return .forbidden
            case .misdirected: return .misdirectedRequest
            case .notFound: return .notFound
            case .methodNotAllowed: return .methodNotAllowed
            case .notAcceptable: return .notAcceptable
            case .payloadTooLarge: return .contentTooLarge
            case .unsupportedMediaType: return .unsupportedMediaType
            case .requestTimeout: return .requestTimeout
            case .tooManyRequests: return .tooManyRequests
            case .unavailable: return .serviceUnavailable
            case .internalError: return .internalServerError
            }
        }
    }

    public let code: Code
    /// One sentence: what was wrong and what to do.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension ServerError: CodedError {
    public var codeName: String { code.description }

    public var category: ErrorCategory {
        switch code.base {
        case .badRequest, .unauthorized, .forbidden, .misdirected, .methodNotAllowed, .notAcceptable, .payloadTooLarge,
            .unsupportedMediaType, .tooManyRequests, .invalidConfiguration:
            return .invalidInput
        case .notFound: return .notFound
        case .requestTimeout: return .timedOut
        case .unavailable: return .unavailable
        case .internalError: return .internalFailure
        }
    }

    public var httpStatus: Int { Int(code.status.code) }
}
