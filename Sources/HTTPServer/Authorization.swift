import Foundation
import EventStoreCore
import Hummingbird

/// The token check: with a token, every route but the open ones needs it, as
/// `Authorization: Bearer TOKEN` or as the session cookie `POST /session` sets (a browser's
/// EventSource cannot send headers). Compared in constant time; 401 and nothing done otherwise,
/// and 429 once an address has sent too many wrong tokens (``TokenThrottle``).
struct AuthorizationMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let token: String?
    let session: SessionKey
    let throttle: TokenThrottle
    /// Paths served without the token: they hold no data.
    static let openPaths: Set<String> = ["/health", "/session", "/", "/index.html", "/favicon.ico"]
    /// Path prefixes served without the token: the console's static files.
    static let openPrefixes = ["/console/"]

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        guard let token else { return try await next(request, context) }
        let path = request.uri.path
        if Self.openPaths.contains(path) || Self.openPrefixes.contains(where: { path.hasPrefix($0) }) {
            return try await next(request, context)
        }
        let authorized = Self.isAuthorized(request, token: token, session: session)
        // Only a token presented and wrong is a guess: a request without one, or a browser's
        // cookie from before a restart, must not lock out others behind the same address.
        try throttle.admit(context.clientAddress, guessed: Self.bearer(request) != nil, right: authorized)
        if authorized { return try await next(request, context) }
        throw ServerError(.unauthorized, "This server needs its token: send `Authorization: Bearer TOKEN`, or open a session with POST /session.")
    }

    /// Whether `request` carries the rights of `token` (always, when there is none): the token
    /// as `Authorization: Bearer`, or the session cookie.
    static func isAuthorized(_ request: Request, token: String?, session: SessionKey) -> Bool {
        guard let token else { return true }
        if let presented = bearer(request), ConstantTime.equal(presented, token) { return true }
        if let cookie = request.cookies[SessionKey.cookieName]?.value, ConstantTime.equal(cookie, session.value) { return true }
        return false
    }

    /// The token of an `Authorization: Bearer TOKEN` header: the scheme in any case, then one or
    /// more spaces or tabs (RFC 9110's whitespace), surrounding whitespace left out.
    static func bearer(_ request: Request) -> String? {
        guard let value = request.headers[.authorization] else { return nil }
        return bearerToken(in: value)
    }

    /// The token of an `Authorization` value `Bearer TOKEN`, nil for another scheme or none.
    static func bearerToken(in value: String) -> String? {
        let scheme = "bearer"
        let utf8 = Array(value.utf8)
        guard utf8.count > scheme.utf8.count,
            String(decoding: utf8[0..<scheme.utf8.count], as: UTF8.self).lowercased() == scheme,
            utf8[scheme.utf8.count] == 0x20 || utf8[scheme.utf8.count] == 0x09
        else { return nil }
        let token = String(decoding: utf8[scheme.utf8.count...], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        return token.isEmpty ? nil : token
    }
}

/// The value of the session cookie: random, made when the server starts, so that the cookie
/// never holds the token itself and dies with the server.
struct SessionKey: Sendable {
    static let cookieName = "esctl_session"
    let value: String

    init() {
        var generator = SystemRandomNumberGenerator()
        value = (0..<4).map { _ in
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
