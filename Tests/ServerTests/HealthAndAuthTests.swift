import EventStore
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("The server's health route, token and refusals")
struct HealthAndAuthTests {
    @Test("GET /health answers 200 with the head, authorized without a token")
    func health() async throws {
        // Given a fresh store and no token, when /health is asked, then it says ok, head 0,
        // authorized.
        try await ServerFixture.with { _, client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text == "{\"status\":\"ok\",\"head\":0,\"authorized\":true,\"readOnly\":false}\n")
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
            }
        }
    }

    @Test("An unknown route is a JSON 404")
    func unknownRoute() async throws {
        try await ServerFixture.with { _, client in
            try await client.execute(uri: "/no/such/route", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.object["code"] as? String == "notFound")
                #expect((response.object["error"] as? String)?.isEmpty == false)
            }
        }
    }

    @Test("With a token, routes need it; /health does not")
    func tokenRequired() async throws {
        try await ServerFixture.with(options: ServerOptions(port: 0, token: "s3cret-0123456789")) { _, client in
            // Given a server with a token, when a route is asked without it, then 401.
            try await client.execute(uri: "/stats", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.object["code"] as? String == "unauthorized")
            }
            try await client.execute(uri: "/stats", method: .get, headers: [.authorization: "Bearer wrong"]) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.object["authorized"] as? Bool == false, "/health without the token says it is not authorized")
            }
            try await client.execute(uri: "/health", method: .get, headers: [.authorization: "Bearer s3cret-0123456789"]) { response in
                #expect(response.object["authorized"] as? Bool == true, "/health with the token says it is authorized")
            }
            // And the scheme in any case, with the whitespace RFC 9110 allows around the token
            for value in ["bearer s3cret-0123456789", "Bearer  s3cret-0123456789", "BEARER\ts3cret-0123456789 "] {
                try await client.execute(uri: "/stats", method: .get, headers: [.authorization: value]) { response in
                    #expect(response.status == .ok, "Authorization: \(value.debugDescription)")
                }
            }
            for value in ["Bearers3cret-0123456789", "Basic s3cret-0123456789", "Bearer ", "Bearer s3cret-012345678"] {
                try await client.execute(uri: "/stats", method: .get, headers: [.authorization: value]) { response in
                    #expect(response.status == .unauthorized, "Authorization: \(value.debugDescription)")
                }
            }
            // When a session is opened with the token, then the cookie lets requests through.
            let cookie = try await client.execute(uri: "/session", method: .post, body: ByteBuffer(string: "{\"token\":\"s3cret-0123456789\"}")) { response in
                #expect(response.status == .noContent)
                let setCookie = try #require(response.headers[.setCookie])
                #expect(setCookie.contains("HttpOnly"))
                #expect(setCookie.contains("SameSite=Strict"))
                #expect(!setCookie.contains("s3cret-0123456789"))
                return String(setCookie.split(separator: ";")[0])
            }
            try await client.execute(uri: "/health", method: .get, headers: [.cookie: cookie]) { response in
                #expect(response.status == .ok)
                #expect(response.object["authorized"] as? Bool == true, "/health with the session cookie says it is authorized")
            }
            try await client.execute(uri: "/stats", method: .get, headers: [.cookie: cookie]) { response in
                #expect(response.status == .ok, "the session cookie opens the routes the token guards")
            }
            try await client.execute(uri: "/session", method: .post, body: ByteBuffer(string: "{\"token\":\"nope\"}")) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.setCookie] == nil)
            }
        }
    }

    @Test("A non-loopback host without a token is refused before binding")
    func nonLoopbackNeedsToken() throws {
        #expect(throws: ServerError.self) { try ServerOptions(host: "0.0.0.0", port: 0).validate() }
        try ServerOptions(host: "0.0.0.0", port: 0, token: "t-0123456789abcdef").validate()
        try ServerOptions(host: "127.0.0.1", port: 0).validate()
        try ServerOptions(host: "127.1.2.3", port: 0).validate()
        try ServerOptions(host: "::1", port: 0).validate()
        try ServerOptions(host: "::ffff:127.0.0.1", port: 0).validate()
        try ServerOptions(host: "localhost", port: 0).validate()
        #expect(throws: ServerError.self) { try ServerOptions(host: "127.0.0.1", port: 0, token: "").validate() }
        // Loopback is decided by the address, not its spelling
        #expect(throws: ServerError.self) { try ServerOptions(host: "127.evil.example", port: 0).validate() }
        #expect(throws: ServerError.self) { try ServerOptions(host: "::2", port: 0).validate() }
        // And a token is long enough to guard something
        let short = #expect(throws: ServerError.self) { try ServerOptions(host: "0.0.0.0", port: 0, token: "0123456789abcde").validate() }
        #expect(short?.message.contains("at least 16") == true)
    }
}
