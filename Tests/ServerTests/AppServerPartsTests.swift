import AppModules
import Apps
import AppsServer
import EventStore
import EventStoreTesting
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import Projections
import Testing

extension TestClientProtocol {
    /// GETs `path` and returns the reply.
    func get(_ path: String) async throws -> AppReply {
        try await execute(uri: path, method: .get) { response in
            AppReply(status: response.status, text: String(buffer: response.body), contentType: response.headers[.contentType])
        }
    }
}

/// A module of the tests' own, with nothing but a name.
private struct Bare: AppModule {
    let name: String
}

/// Parts of the tests' own for the module `bare`: a live GET, a POST that takes a form label, a view.
private struct BareParts: AppServerParts {
    var app = "bare"
    var views: [ConsoleView] = [ConsoleView(name: "bare-view", title: "Bare", script: Array("export const view = {};".utf8))]
    var live: Set<String> = ["/bare/live", "/bare/rooms/{room}"]
    var formLabelled: Set<String> = ["/bare/say"]
    /// A route beyond the usual ones, (method, path), to try clashes with.
    var extra: (HTTPRequest.Method, String)? = nil
    var consoleViews: [ConsoleView] { views }
    var liveRoutes: Set<String> { live }
    var formLabelledJSONRoutes: Set<String> { formLabelled }

    func addRoutes(to router: Router<ServerContext>, on server: Server) {
        router.get("/bare/live") { _, _ in "live" }
        router.get("/bare/rooms/{name}") { _, _ in "room" }
        router.get("/bare/read") { _, _ in "read" }
        router.post("/bare/say") { _, _ in "said" }
        if let (method, path) = extra { router.on(RouterPath(path), method: method) { _, _ in "extra" } }
    }
}

@Suite("The apps' own parts on the server: routes and console views, served with their module only")
struct AppServerPartsTests {
    /// Sources/Apps/Server/Console, the seed views' files.
    static var seedViewDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Apps/Server/Console")
    }

    @Test("With every seed app, /console/views.json lists the four views and each file is served byte for byte")
    func seedViews() async throws {
        try await ServerFixture.with { _, client in
            // When the list is asked for, then the four views in the menu's order.
            let list = try await client.get("/console/views.json")
            #expect(list.status == .ok)
            let views = list.object["views"] as? [[String: Any]] ?? []
            #expect(views.map { $0["name"] as? String ?? "?" } == ["workout", "chat", "camp", "color"])
            #expect(views.map { $0["title"] as? String ?? "?" } == ["Workout", "Chat", "Campground", "Color"])
            #expect(views.map { $0["script"] as? String ?? "?" } == ["workout", "chat", "camp", "color"].map { "/console/views/\($0).js" })
            // Then each script and sheet is the file of Sources/Apps/Server/Console, with its type.
            for name in ["workout", "chat", "camp", "color"] {
                for (suffix, type) in [("js", "text/javascript; charset=utf-8"), ("css", "text/css; charset=utf-8")] {
                    let file = try String(contentsOf: Self.seedViewDirectory.appendingPathComponent("\(name).\(suffix)"), encoding: .utf8)
                    let served = try await client.get("/console/views/\(name).\(suffix)")
                    #expect(served.status == .ok, "\(name).\(suffix)")
                    #expect(served.text == file, "\(name).\(suffix) differs from the file")
                    #expect(served.contentType == type, "\(name).\(suffix)")
                }
            }
            #expect(try await client.get("/console/views/nothing.js").status == .notFound)
        }
    }

    @Test("A seed view's script imports the console's helpers only, and exports its view")
    func seedViewScripts() throws {
        for name in ["workout", "chat", "camp", "color"] {
            let text = try String(contentsOf: Self.seedViewDirectory.appendingPathComponent("\(name).js"), encoding: .utf8)
            let imports = text.split(separator: "\n").filter { $0.hasPrefix("import ") }
            #expect(imports.count == 1 && imports[0].hasSuffix("from '/console/api.js';"), "\(name).js imports \(imports)")
            #expect(text.contains("export const view = {"), "\(name).js exports no view")
        }
    }

    @Test("Parts of an app not served are left out: no view, no route, whatever parts the program passes")
    func partsFollowTheApps() async throws {
        // Given the seed parts all passed, when only the color app is served, then only its view.
        try await ServerFixture.with(apps: [ColorApp()]) { _, client in
            let views = try await client.get("/console/views.json").object["views"] as? [[String: Any]] ?? []
            #expect(views.map { $0["name"] as? String ?? "?" } == ["color"])
            #expect(try await client.get("/console/views/workout.js").status == .notFound)
            #expect(try await client.get("/chat/room?ann").status == .notFound)
            #expect(try await client.post("/chat/say", #"{"id":"8D1E5E0A-1111-4B0F-9A6D-0D1A2B3C4D5E","user":"a","message":"hi","date":0}"#).status == .notFound)
        }
        // And with no app at all, no view and an empty app list.
        try await ServerFixture.with(apps: []) { _, client in
            let views = try await client.get("/console/views.json").text
            #expect(views == #"{"views":[]}"#)
            let apps = try await client.get("/apps").text
            #expect(apps == #"{"apps":[]}"# + "\n")
            let head = try await client.head()
            #expect(head == 0, "something was recorded")
        }
    }

    @Test("A part's live route answers no HEAD, its form-labelled POST takes the label, and no other route does")
    func liveAndFormLabelledRoutes() async throws {
        try await ServerFixture.with(apps: [Bare(name: "bare")], parts: [BareParts()]) { _, client in
            // When HEAD asks for a live route, however its path is written, then 405; the part's other GET answers HEAD.
            for path in ["/bare/live", "//bare/live/", "/bare/rooms/r1", "/bare//rooms/r1/"] {
                try await client.execute(uri: path, method: .head) { response in #expect(response.status == .methodNotAllowed, "HEAD \(path)") }
            }
            try await client.execute(uri: "/bare/read", method: .head) { response in #expect(response.status == .ok) }
            #expect(try await client.get("/bare/live").text == "live")
            // When a form label comes with JSON, then the part's route takes it and the generic routes refuse it.
            let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            for path in ["/bare/say", "/bare/say/"] {
                try await client.execute(uri: path, method: .post, headers: form, body: ByteBuffer(string: "{}")) { response in
                    #expect(response.status == .ok, "POST \(path)")
                }
            }
            try await client.execute(uri: "/append", method: .post, headers: form, body: ByteBuffer(string: "{}")) { response in
                #expect(response.status == .unsupportedMediaType)
            }
            let views = try await client.get("/console/views.json").object["views"] as? [[String: Any]] ?? []
            #expect(views.map { $0["name"] as? String ?? "?" } == ["bare-view"])
            #expect(views.first?["stylesheet"] is NSNull)
            #expect(try await client.get("/console/views/bare-view.css").status == .notFound)
        }
    }

    @Test("A view without a usable name, or with a taken one, is refused when the server is made")
    func refusesViewNames() async throws {
        try await TemporaryStore.with { store in
            let runner = try await ProjectionRunner(store: store, projections: [])
            let script = Array("export const view = {};".utf8)
            let cases: [([ConsoleView], String)] = [
                ([ConsoleView(name: "a b", title: "A", script: script)], "The console view 'a b' has no usable name: use letters, digits, '-' and '_', starting with a letter, at most 40 bytes."),
                ([ConsoleView(name: "9v", title: "A", script: script)], "The console view '9v' has no usable name: use letters, digits, '-' and '_', starting with a letter, at most 40 bytes."),
                ([ConsoleView(name: "", title: "A", script: script)], "The console view '' has no usable name: use letters, digits, '-' and '_', starting with a letter, at most 40 bytes."),
                ([ConsoleView(name: "projections", title: "P", script: script)], "Two console views are named 'projections' (or it is one of the console's own); give each its own name."),
                (
                    [ConsoleView(name: "v", title: "1", script: script), ConsoleView(name: "v", title: "2", script: script)],
                    "Two console views are named 'v' (or it is one of the console's own); give each its own name."
                ),
            ]
            for (views, message) in cases {
                let error = #expect(throws: ServerError.self) {
                    try Server(store: store, runner: runner, apps: [Bare(name: "bare")], parts: [BareParts(views: views)])
                }
                #expect(error?.code == .invalidConfiguration)
                #expect(error?.message == message)
            }
            // And a part of a module not served is not checked: it is left out.
            _ = try Server(store: store, runner: runner, apps: [], parts: [BareParts(views: [ConsoleView(name: "a b", title: "A", script: script)])])
        }
    }

    @Test("A part's routes that clash with the server's or another part's, or say what they are not, are refused when the server is made")
    func refusesPartRoutes() async throws {
        try await TemporaryStore.with { store in
            let runner = try await ProjectionRunner(store: store, projections: [])
            let bare = [Bare(name: "bare"), Bare(name: "other")]
            let cases: [([BareParts], String)] = [
                ([BareParts(extra: (.get, "/health"))], "The app 'bare' adds the route GET /health, which the server or another app has already; give it another path."),
                (
                    [BareParts(extra: (.get, "/projections/{x}"))],
                    "The app 'bare' adds the route GET /projections/{}, which the server or another app has already; give it another path."
                ),
                (
                    [BareParts(extra: (.get, "/console/data"))],
                    "The app 'bare' adds the route GET /console/data, under /apps or /console, which are the server's (the modules' commands, the console's open files); give it another path."
                ),
                (
                    [BareParts(extra: (.post, "/apps/bare/more"))],
                    "The app 'bare' adds the route POST /apps/bare/more, under /apps or /console, which are the server's (the modules' commands, the console's open files); give it another path."
                ),
                ([BareParts(), BareParts(views: [])], "Two server parts are given for the app 'bare'; give one, with all its routes and views."),
                (
                    [BareParts(), BareParts(app: "other", views: [])],
                    "The app 'other' adds the route GET /bare/live, which the server or another app has already; give it another path."
                ),
                ([BareParts(live: ["/bare/say"])], "The app 'bare' names /bare/say among its live routes, but adds no GET route there."),
                ([BareParts(formLabelled: ["/append"])], "The app 'bare' names /append among its form-labelled routes, but adds no POST route there."),
            ]
            for (parts, message) in cases {
                let error = #expect(throws: ServerError.self, "\(message)") { try Server(store: store, runner: runner, apps: bare, parts: parts) }
                #expect(error?.code == .invalidConfiguration)
                #expect(error?.message == message)
            }
        }
    }

    @Test("A part's OpenAPI part is in the document when the part is served, and only then")
    func partDocument() async throws {
        // Given the chat served with its parts, then the protocol's paths are in the document.
        try await ServerFixture.with(apps: [ChatApp()]) { _, client in
            let document = try await client.get("/openapi.yaml").text
            #expect(document.contains("  /chat/room:") && document.contains("  /chat/say:") && document.contains("  /apps/chat/say:"))
        }
        // Given the chat served without its parts, then its commands but not the protocol.
        try await ServerFixture.with(apps: [ChatApp()], parts: []) { _, client in
            let document = try await client.get("/openapi.yaml").text
            #expect(!document.contains("/chat/room") && !document.contains("  /chat/say:") && document.contains("  /apps/chat/say:"))
            #expect(try await client.get("/chat/room?ann").status == .notFound)
        }
    }

    @Test("GET /apps lists the served modules and their commands with their declared fields")
    func appList() async throws {
        try await ServerFixture.with { _, client in
            let reply = try await client.get("/apps")
            #expect(reply.status == .ok)
            let apps = reply.object["apps"] as? [[String: Any]] ?? []
            #expect(apps.map { $0["name"] as? String ?? "?" } == ["fitness", "chat", "campground", "color"])
            let color = apps.last?["commands"] as? [[String: Any]] ?? []
            #expect(color.map { $0["path"] as? String ?? "?" } == ["/apps/color/press", "/apps/color/set"])
            let press = color.first?["fields"] as? [[String: Any]] ?? []
            #expect(press.map { "\($0["name"] ?? "?") \($0["type"] ?? "?") \($0["required"] as? Bool ?? false)" } == ["calculator string false", "key string true"])
            #expect(try await client.get("/apps?x=1").status == .badRequest)
        }
    }
}

@Suite("A projection's tables over HTTP, for a face that knows none of its types")
struct ProjectionTableRouteTests {
    @Test("about lists the tables and the query parameters")
    func about() async throws {
        try await ServerFixture.with { _, client in
            // Given two users' goals.
            for user in ["ann", "bob"] {
                #expect(try await client.post("/apps/fitness/goal", #"{"user":"\#(user)","steps":100}"#).status == .created)
            }
            // When app-state is described, then its one table, and its parameter, user.
            let about = try await client.get("/projections/app-state/about")
            #expect(about.status == .ok)
            #expect(canonical(about.object) == canonical([
                "name": "app-state", "version": 3, "tables": [["name": "workouts"]],
                "queryParameters": [["name": "user", "help": "the user (default: default)"]],
            ]))
            #expect(try await client.get("/projections/nothing/about").status == .notFound)
            #expect(try await client.get("/projections/app-state/about?x=1").status == .badRequest)
        }
    }

    @Test("a table's rows come a page at a time, in key order, with the cursor of the next page")
    func pages() async throws {
        try await ServerFixture.with { _, client in
            for user in ["ann", "bob", "cy"] {
                #expect(try await client.post("/apps/fitness/goal", #"{"user":"\#(user)","steps":100}"#).status == .created)
            }
            // When pages of one row are asked for, following each next, then each user once, in order.
            var keys: [String] = []
            var after: String? = nil
            for _ in 0..<4 {
                let page = try await client.get("/projections/app-state/tables/workouts?limit=2" + (after.map { "&after=\($0)" } ?? ""))
                #expect(page.status == .ok, "\(page.text)")
                let rows = page.object["rows"] as? [[String: Any]] ?? []
                keys += rows.map { $0["keyText"] as? String ?? "?" }
                for row in rows {
                    let key = row["key"] as? String ?? ""
                    #expect(key.count % 2 == 0 && key.allSatisfy(\.isHexDigit))
                    #expect((row["bytes"] as? Int ?? 0) > 0)
                    #expect((row["valueText"] as? String ?? "").contains("notStarted"))
                }
                after = page.object["next"] as? String
                if after == nil { break }
            }
            #expect(keys.map { $0.filter(\.isLetter) } == ["ann", "bob", "cy"])
            #expect(after == nil, "the last page has a next")
        }
    }

    @Test("an unknown table, a cursor that is not hexadecimal, a limit out of range: refused, saying what")
    func refusals() async throws {
        try await ServerFixture.with { _, client in
            let unknown = try await client.get("/projections/app-state/tables/nothing")
            #expect(unknown.status == .notFound)
            #expect(unknown.object["error"] as? String == "The projection 'app-state' has no table 'nothing'; its tables are workouts.")
            let cursor = try await client.get("/projections/app-state/tables/workouts?after=zz")
            #expect(cursor.status == .badRequest)
            #expect(cursor.object["error"] as? String == "The query parameter 'after' must be a row's key in hexadecimal (a \"next\" of an earlier page).")
            for limit in ["0", "1001", "x"] {
                #expect(try await client.get("/projections/app-state/tables/workouts?limit=\(limit)").status == .badRequest, "limit \(limit)")
            }
            #expect(try await client.get("/projections/app-state/tables/workouts?other=1").status == .badRequest)
            #expect(try await client.get("/projections/nothing/tables/workouts").status == .notFound)
        }
    }
}
