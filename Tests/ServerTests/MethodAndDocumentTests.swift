import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Wrong methods (405 with Allow) and the OpenAPI document against the routes")
struct MethodAndDocumentTests {
    @Test("A route asked with a method it does not take is a JSON 405 with Allow; an unknown path stays 404")
    func wrongMethods() async throws {
        try await ServerFixture.with { _, client in
            let cases: [(method: HTTPRequest.Method, path: String, allow: String)] = [
                (.get, "/apps/fitness/start", "POST"),
                (.delete, "/health", "GET, HEAD"),
                (.put, "/openapi.yaml", "GET, HEAD"),
                (.head, "/subscribe", "GET"),
                (.head, "/chat/room", "GET"),
                (.get, "/session", "POST"),
            ]
            for (method, path, allow) in cases {
                // Given a route with other methods, when asked with this one, then 405, Allow and the JSON error.
                try await client.execute(uri: path, method: method) { response in
                    #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                    #expect(response.headers[.allow] == allow, "\(method) \(path)")
                    #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                    #expect(canonical(response.object) == canonical(["error": "\(path) does not take \(method.rawValue); it takes \(allow).", "code": "methodNotAllowed"]))
                }
            }
            try await client.execute(uri: "/apps/fitness/nothing", method: .post) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.allow] == nil)
                #expect(response.object["code"] as? String == "notFound")
            }
        }
    }

    @Test("With a token, a wrong method without it is 401, not 405: nothing about the routes leaks")
    func wrongMethodNeedsToken() async throws {
        try await ServerFixture.with(options: ServerOptions(port: 0, token: "t-0123456789abcdef")) { _, client in
            try await client.execute(uri: "/apps/fitness/start", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.allow] == nil)
            }
        }
    }

    @Test("GET /openapi.yaml serves docs/openapi.yaml as it is in the repository")
    func servedDocument() async throws {
        let file = try String(contentsOf: Self.documentURL, encoding: .utf8)
        try await ServerFixture.with { _, client in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/yaml; charset=utf-8")
                // When this fails, run scripts/openapi-swift.sh.
                #expect(response.text == file, "the embedded document differs from docs/openapi.yaml: run scripts/openapi-swift.sh")
            }
        }
    }

    @Test("The document's paths and methods are exactly the routes the server registers")
    func documentMatchesRoutes() async throws {
        let document = Self.operations(in: try String(contentsOf: Self.documentURL, encoding: .utf8))
        try await TemporaryStoreServer.with { server in
            let registered = Set(server.router().routes.map { "\($0.method.rawValue) \(Self.openAPIPath($0.path.description))" })
            // Given the router's routes, then each is in the document, and each documented
            // operation is registered.
            #expect(registered.subtracting(document).sorted() == [], "registered but not in docs/openapi.yaml")
            #expect(
                document.subtracting(registered).sorted() == [],
                "in docs/openapi.yaml but not registered")
            #expect(registered.count >= 20, "the router lists too few routes: \(registered.sorted())")
        }
    }

    @Test("The document reader finds operations, and the path conversion turns captures into {names}")
    func readerWorks() {
        let text = """
            openapi: 3.1.0
            paths:
              /a/{b}:
                parameters:
                  - $ref: "#/x"
                get:
                  summary: x
                post: { summary: y }
              /c:
                delete:
                  x: 1
            components:
              schemas:
                get:
                  type: object
            """
        #expect(Self.operations(in: text) == ["GET /a/{b}", "POST /a/{b}", "DELETE /c"])
        #expect(Self.openAPIPath("/projections/:name/rebuild") == "/projections/{name}/rebuild")
        #expect(Self.openAPIPath("/health") == "/health")
    }

    static var documentURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/openapi.yaml")
    }

    /// "METHOD /path" for each operation under `paths:`. The document is written in a fixed
    /// layout (paths at two spaces, methods at four), which this reads without a YAML library.
    static func operations(in text: String) -> Set<String> {
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        var operations: Set<String> = []
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty { inPaths = line == "paths:" ; path = nil; continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   "), let colon = line.lastIndex(of: ":") {
                path = String(line[line.index(line.startIndex, offsetBy: 2)..<colon])
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let path {
                let word = line.dropFirst(4).prefix { $0 != ":" }
                if methods.contains(String(word)) { operations.insert("\(word.uppercased()) \(path)") }
            }
        }
        return operations
    }

    /// A router path (`/projections/:name`) in OpenAPI's form (`/projections/{name}`).
    static func openAPIPath(_ routerPath: String) -> String {
        let parts = routerPath.split(separator: "/", omittingEmptySubsequences: false).map { part in
            part.hasPrefix(":") ? "{\(part.dropFirst())}" : String(part)
        }
        return parts.joined(separator: "/")
    }
}

/// A server on a fresh store, without an application: for what needs only its router.
enum TemporaryStoreServer {
    static func with(_ body: @escaping @Sendable (Server) async throws -> Void) async throws {
        try await ServerFixture.with { server, _ in try await body(server) }
    }
}
