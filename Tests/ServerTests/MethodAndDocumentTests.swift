import AppModules
import Apps
import EventStore
import EventStoreTesting
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import Projections
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

    @Test("GET /openapi.yaml with the seed apps is docs/openapi.yaml as it is in the repository")
    func servedDocument() async throws {
        let file = try String(contentsOf: Self.documentURL, encoding: .utf8)
        try await ServerFixture.with { _, client in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/yaml; charset=utf-8")
                // When this fails, run scripts/openapi.sh.
                #expect(response.text == file, "the served document differs from docs/openapi.yaml: run scripts/openapi.sh")
            }
        }
    }

    @Test("The served document's paths and methods are exactly the routes the server registers, with every app, some or none")
    func documentMatchesRoutes() async throws {
        let choices: [[any AppModule]] = [AppCatalog.modules, [], [ChatApp(), ColorApp()], [NotesLikeApp()]]
        for apps in choices {
            let names = apps.map(\.name)
            try await ServerFixture.with(apps: apps) { server, client in
                let served = try await client.execute(uri: "/openapi.yaml", method: .get) { response in response.text }
                let document = Self.operations(in: served)
                let registered = Set(server.router().routes.map { "\($0.method.rawValue) \(Self.openAPIPath($0.path.description))" })
                // Given the router's routes, then each is in the document, and each documented
                // operation is registered.
                #expect(registered.subtracting(document).sorted() == [], "\(names): registered but not in /openapi.yaml")
                #expect(document.subtracting(registered).sorted() == [], "\(names): in /openapi.yaml but not registered")
                #expect(registered.count >= 20, "the router lists too few routes: \(registered.sorted())")
                // And only the apps served have paths there.
                #expect(document.contains("POST /apps/chat/say") == names.contains("chat"), "\(names)")
                #expect(document.contains("GET /chat/room") == names.contains("chat"), "\(names)")
                #expect(document.contains("POST /apps/camp/reserve") == names.contains("campground"), "\(names)")
                #expect(!served.contains("ColorDisplay") || names.contains("color"), "\(names)")
            }
        }
    }

    @Test("a module without a part of its own gets its commands' paths written from their declared fields")
    func writtenPaths() async throws {
        try await ServerFixture.with(apps: [NotesLikeApp()]) { _, client in
            let served = try await client.execute(uri: "/openapi.yaml", method: .get) { response in response.text }
            // Then the command's path, its fields with their types and what is required are there.
            let expected = """
                  /apps/memo/add-memo:
                    post:
                      operationId: "memoAddMemo"
                      summary: "Adds a memo."
                      requestBody:
                        required: true
                        content:
                          application/json:
                            schema:
                              type: object
                              additionalProperties: false
                              required: ["text"]
                              properties:
                                "text": { type: string, description: "What to remember." }
                                "urgent": { type: boolean, description: "" }
                      responses:
                        "200": { $ref: "#/components/responses/AppAnswer" }
                """
            #expect(served.contains(expected), "\(served)")
            #expect(served.contains("  /apps/memo/clear:\n    post:\n      operationId: \"memoClear\""))
        }
    }

    @Test("a module's part that is not in shape, or names what the document has, is refused when the server is made")
    func refusesParts() async throws {
        try await TemporaryStore.with { store in
            let runner = try await ProjectionRunner(store: store, projections: [])
            let cases: [(String, String)] = [
                ("info:\n  title: x\n", "The OpenAPI part of the app 'memo' has 'info:' at the top; it may have only paths, schemas, responses and parameters."),
                ("paths:\n /x:\n", "The OpenAPI part of the app 'memo' indents the first entry of paths by 1 spaces, not 2."),
                ("paths:\n    /apps/memo/x:\n      post: {}\n", "The OpenAPI part of the app 'memo' indents the first entry of paths by 4 spaces, not 2."),
                ("  /x:\n", "The OpenAPI part of the app 'memo' has a line before its first section."),
                ("paths:\n\t/x:\n", "The OpenAPI part of the app 'memo' indents a line with a tab; use spaces."),
                ("paths:\r\n  /x:\r\n", "The OpenAPI part of the app 'memo' has carriage returns; end its lines with line feeds only."),
                ("paths:\n  \"/health\":\n    get: {}\n", "The OpenAPI part of the app 'memo' names paths '/health', which the document has already."),
                ("paths:\n  /metrics: # ours\n    get: {}\n", "The OpenAPI part of the app 'memo' names paths '/metrics', which the document has already."),
                ("schemas:\n  Error: { type: string }\n", "The OpenAPI part of the app 'memo' names schemas 'Error', which the document has already."),
                ("paths:\n  /a:\n    get: {}\n  /a:\n    put: {}\n", "The OpenAPI part of the app 'memo' names paths '/a', which the document has already."),
                (
                    "paths:\n  /apps/memo/x:\n    post:\n      operationId: \"queryProjection\"\n",
                    "The OpenAPI part of the app 'memo' has the operationId 'queryProjection', which the document has already; give each operation an id of its own."
                ),
                ("paths:\n  /health:\n    get: {}\n", "The OpenAPI part of the app 'memo' names paths '/health', which the document has already."),
                ("schemas:\n  Error:\n    type: object\n", "The OpenAPI part of the app 'memo' names schemas 'Error', which the document has already."),
            ]
            for (part, message) in cases {
                let error = #expect(throws: ServerError.self, "\(part)") { try Server(store: store, runner: runner, apps: [NotesLikeApp(openAPI: part)]) }
                #expect(error?.code == .invalidConfiguration)
                #expect(error?.message == message)
            }
            // And a part's blank lines (a block's paragraphs) are kept, those at its end dropped.
            let part = "paths:\n  /apps/memo/add-memo:\n    post:\n      description: |\n        One.\n\n        Two.\n      operationId: memoAddMemo\n  /apps/memo/clear:\n    post: {}\n\n\n"
            let server = try Server(store: store, runner: runner, apps: [NotesLikeApp(openAPI: part)])
            let document = try await ServerFixture.test(server, .router) { client in
                try await client.execute(uri: "/openapi.yaml", method: .get) { response in response.text }
            }
            #expect(document.contains("        One.\n\n        Two.\n"), "\(document)")
            #expect(document.contains("    post: {}\ncomponents:"), "\(document)")
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

/// A module with commands and, unless given one, no OpenAPI part of its own.
private struct NotesLikeApp: AppModule {
    let name = "memo"
    var openAPI: String?

    init(openAPI: String? = nil) {
        self.openAPI = openAPI
    }

    func commands(_ context: AppContext) throws -> [AppCommand] {
        [
            AppCommand("add-memo", summary: "Adds a memo.", fields: [AppField("text", .string, "What to remember."), AppField("urgent", .boolean, required: false)]) { _ in
                .events([])
            },
            AppCommand("clear") { _ in .events([]) },
        ]
    }
}
