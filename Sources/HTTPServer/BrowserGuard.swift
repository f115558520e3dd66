import Foundation
import HTTPTypes
import Hummingbird

/// Keeps other sites' web pages out, token or not (a token does not help when there is none, the
/// default on loopback, nor against a page that rides on the console's cookie):
///
/// - `Host` must name this server (``HostNames``): a DNS-rebinding page, whose requests carry
///   its own domain, gets 421 and reads nothing.
/// - A request with an `Origin` other than the server's own (or one `--allow-origin` names) gets
///   403; so does one a browser marks as sent by another site (`Sec-Fetch-Site`) without an
///   allowed `Origin`: an `<img>` or a link cannot open an app's live route that records a visit. The
///   console's static files and `/health` are exempt, so a link to the console still opens it.
/// - A body with a content type other than JSON or NDJSON gets 415: a page's `<form>` can only
///   send form encodings and `text/plain`. A body without a content type is a program's, and is
///   read as the route reads it; an app's routes that its original clients post to with a form
///   encoding label on JSON (``AppServerParts/formLabelledJSONRoutes``) take that label too.
struct BrowserGuardMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let hosts: HostNames
    /// Origins allowed beside the server's own, lowercased (`*` allows every one).
    let allowedOrigins: Set<String>
    /// POST routes whose original clients send JSON labelled with URLSession's default form
    /// encoding, and must work unchanged. The `Origin` check still keeps other sites' forms out.
    let formLabelledJSONRoutes: RoutePatterns

    init(options: ServerOptions, formLabelledJSONRoutes: RoutePatterns = RoutePatterns([])) {
        hosts = HostNames(options: options)
        allowedOrigins = Set(options.allowedOrigins.map { Self.normalizedOrigin($0) })
        self.formLabelledJSONRoutes = formLabelledJSONRoutes
    }

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        if let authority = request.head.authority, !hosts.allows(authority: authority) {
            throw ServerError(
                .misdirected,
                "This server does not answer to the host '\(Self.shown(authority))'; use its address, or start it with --allow-host NAME.")
        }
        if !Self.isExempt(request) {
            try checkOrigin(request)
        }
        if Self.carriesBody(request.method), let type = request.headers[.contentType], !Self.isJSON(type),
            !(formLabelledJSONRoutes.matches(request.uri.path) && Self.isFormEncoded(type))
        {
            throw ServerError(
                .unsupportedMediaType,
                "The body's content type '\(Self.shown(type))' is not one this server reads; send Content-Type: application/json (application/x-ndjson for POST /append).")
        }
        return try await next(request, context)
    }

    private func checkOrigin(_ request: Request) throws(ServerError) {
        if let origin = request.headers[.origin] {
            let normalized = Self.normalizedOrigin(origin)
            if allowedOrigins.contains("*") || allowedOrigins.contains(normalized) { return }
            // The server's own pages, served directly or through a TLS proxy under the same name.
            if let authority = request.head.authority,
                normalized == Self.normalizedOrigin("http://\(authority)") || normalized == Self.normalizedOrigin("https://\(authority)")
            {
                return
            }
            throw ServerError(
                .forbidden,
                "Requests from the web page at '\(Self.shown(origin))' are refused: it is not this server's own; start the server with --allow-origin \(Self.shown(origin)) to allow it.")
        }
        if let site = request.headers[.secFetchSite]?.lowercased(), site != "same-origin", site != "none" {
            throw ServerError(
                .forbidden,
                "A web page of another site sent this request (Sec-Fetch-Site: \(Self.shown(site))); it is refused.")
        }
    }

    /// The console's page and files and `/health`: they hold no data, and a link from anywhere
    /// may open them.
    static func isExempt(_ request: Request) -> Bool {
        guard request.method == .get || request.method == .head else { return false }
        let path = request.uri.path
        return AuthorizationMiddleware.openPaths.contains(path) && path != "/session"
            || AuthorizationMiddleware.openPrefixes.contains(where: { path.hasPrefix($0) })
    }

    static func isFormEncoded(_ contentType: String) -> Bool {
        mediaType(contentType) == "application/x-www-form-urlencoded"
    }

    static func carriesBody(_ method: HTTPRequest.Method) -> Bool {
        method == .post || method == .put || method == .patch || method == .delete
    }

    /// Whether a `Content-Type` is JSON (`application/json`, `application/*+json`) or NDJSON.
    static func isJSON(_ contentType: String) -> Bool {
        let media = mediaType(contentType)
        switch media {
        case "application/json", "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines":
            return true
        default:
            return media.hasPrefix("application/") && media.hasSuffix("+json")
        }
    }

    /// A `Content-Type`'s media type (before any `;`), trimmed and lowercased.
    static func mediaType(_ contentType: String) -> String {
        HeaderText.trimmedLowercased(contentType.split(separator: ";", maxSplits: 1).first ?? "")
    }

    /// `scheme://host[:port]` lowercased, without a default port or a trailing slash.
    static func normalizedOrigin(_ origin: String) -> String {
        var text = HeaderText.trimmedLowercased(origin[...])
        while text.hasSuffix("/") { text.removeLast() }
        if text.hasPrefix("http://"), text.hasSuffix(":80") { text.removeLast(3) }
        if text.hasPrefix("https://"), text.hasSuffix(":443") { text.removeLast(4) }
        return text
    }

    /// A client's text, cut short and printable, to quote in a sentence.
    static func shown(_ text: String) -> String {
        let printable = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
        return printable.count > 80 ? String(printable.prefix(80)) + "..." : printable
    }
}

/// The names a request's `Host` may give: IP addresses (a rebinding page always sends a domain
/// name), `localhost`, the address the server listens on, the machine's own name, and the
/// names `--allow-host` adds.
struct HostNames: Sendable {
    let names: Set<String>

    init(options: ServerOptions) {
        var names: Set<String> = ["localhost"]
        names.insert(Self.hostPart(options.host))
        if let machine = Self.machineName() {
            names.insert(machine)
            if let short = machine.split(separator: ".").first { names.insert(String(short)) }
        }
        for extra in options.allowedHosts { names.insert(Self.hostPart(extra)) }
        self.names = names
    }

    /// Whether the `Host` header value `authority` (`name[:port]`, `[v6]:port`) names this server.
    func allows(authority: String) -> Bool {
        let host = Self.hostPart(authority)
        if host.isEmpty { return false }
        if names.contains("*") || names.contains(host) { return true }
        return IPAddressText.isLiteral(host)
    }

    /// The host of `name[:port]` or `[v6][:port]`, lowercased, without brackets or a final dot.
    static func hostPart(_ authority: String) -> String {
        var text = HeaderText.trimmedLowercased(authority[...])
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return "" }
            return String(text[text.index(after: text.startIndex)..<close])
        }
        if text.utf8.count(where: { $0 == UInt8(ascii: ":") }) == 1, let colon = text.firstIndex(of: ":") {
            text = String(text[..<colon])
        }
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }

    static func machineName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
        return name.isEmpty ? nil : name
    }
}

/// IP addresses as text, decided by the system's parser (`inet_pton`), not by their spelling.
enum IPAddressText {
    /// Whether `text` is an IPv4 (dotted quad) or IPv6 address.
    static func isLiteral(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Whether `text` is a loopback address (127.0.0.0/8, ::1, or an IPv4-mapped 127.x), or
    /// `localhost`.
    static func isLoopback(_ text: String) -> Bool {
        let host = HostNames.hostPart(text)
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return bytes[12] == 127 }
        }
        return false
    }
}

extension HTTPField.Name {
    // Valid tokens; the initializer returns nil only for invalid ones.
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site") ?? .contentType
}
