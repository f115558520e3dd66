import AppModules
import Apps
import EventStoreTesting
import Projections
import EventStore
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import Testing

/// A module of the tests' own: notes, with a command that appends one and refuses an empty text.
private struct NotesApp: AppModule {
    let name = "notes"

    /// An empty note: 422 `emptyNote`, pointing to a listing.
    struct EmptyNote: AppRefusal {
        var codeName: String { "emptyNote" }
        var category: ErrorCategory { .rejected }
        var message: String { "A note needs a text." }
        var httpStatus: Int { 422 }
        var description: String { message }
        var listing: (projection: String, parameter: String)? { ("notes", "author") }
        var recordedEvents: [RecordedEvent] { [] }
    }

    /// A refusal whose status is no HTTP status at all.
    struct OddStatus: AppRefusal {
        var codeName: String { "odd" }
        var category: ErrorCategory { .rejected }
        var message: String { "Odd." }
        var httpStatus: Int { 1000 }
        var description: String { message }
        var listing: (projection: String, parameter: String)? { nil }
        var recordedEvents: [RecordedEvent] { [] }
    }

    func commands(_ context: AppContext) throws -> [AppCommand] {
        [
            AppCommand("add", fields: [AppField("id", .string), AppField("text", .string), AppField("pinned", .boolean, required: false)]) { input in
                let text = try input.string("text")
                guard !text.isEmpty else { throw EmptyNote() }
                let data = Data(#"{"text":\#(JSONValue.string(text).serialized)}"#.utf8)
                let result = try await context.store.append(to: "note-\(try input.string("id"))", events: [NewEvent(type: "NoteAdded", data: data)])
                return .events(try await context.store.readStream(result.stream, from: nil, direction: .forward, limit: 10))
            },
            AppCommand("odd") { _ in throw OddStatus() },
            AppCommand("count", app: "note-stats") { _ in
                .state(.object([("head", .int(Int64(try await context.store.headPosition())))]), recorded: false)
            },
        ]
    }
}

/// A module whose name two modules share.
private struct Named: AppModule {
    let name: String
}

@Suite("App modules over HTTP: any module's commands at POST /apps/{app}/{command}")
struct AppModuleRouteTests {
    @Test("a module's commands are served, their input checked against the declared fields, their refusals in the module's own code")
    func servesAModule() async throws {
        try await ServerFixture.with(apps: [NotesApp()]) { _, client in
            // When a note is added, then 201 with the event recorded.
            let added = try await client.post("/apps/notes/add", #"{"id":"n1","text":"hi"}"#)
            #expect(added.status == .created, "\(added.text)")
            #expect(added.summary == ["note-n1@1 NoteAdded"])
            #expect(added.data(0)["text"] as? String == "hi")
            // When a declared field is missing or of the wrong type, or one is not declared, then 400 naming it.
            let missing = try await client.post("/apps/notes/add", #"{"id":"n1"}"#)
            #expect(missing.status == .badRequest)
            #expect(missing.object["field"] as? String == "text")
            #expect(missing.object["error"] as? String == "The field 'text' is missing from the body of POST /apps/notes/add; give it as a string.")
            let mistyped = try await client.post("/apps/notes/add", #"{"id":"n1","text":"x","pinned":"yes"}"#)
            #expect(mistyped.status == .badRequest)
            #expect(mistyped.object["field"] as? String == "pinned")
            let unknown = try await client.post("/apps/notes/add", #"{"id":"n1","text":"x","color":"red"}"#)
            #expect(unknown.status == .badRequest)
            #expect(unknown.object["error"] as? String == "The field 'color' is not one POST /apps/notes/add takes; its fields are 'id', 'pinned', 'text'.")
            let long = String(repeating: "k", count: 100_000)
            let unknownLong = try await client.post("/apps/notes/add", #"{"id":"n1","text":"x","\#(long)":1}"#)
            #expect(unknownLong.status == .badRequest)
            #expect(unknownLong.object["field"] as? String == String(repeating: "k", count: 40) + "...")
            #expect(unknownLong.text.utf8.count < 1_000, "the refusal echoes the client's key in full")
            // When a module's refusal says a status that is none, then 500, and the server goes on.
            let odd = try await client.post("/apps/notes/odd", "")
            #expect(odd.status == .internalServerError)
            #expect(odd.object["code"] as? String == "odd")
            // When the module refuses, then its status, code and sentence, with the listing route.
            let empty = try await client.post("/apps/notes/add", #"{"id":"n1","text":""}"#)
            #expect(empty.status == .unprocessableContent)
            #expect(canonical(empty.object) == canonical(["code": "emptyNote", "error": "A note needs a text; GET /projections/notes?author=... lists them."]))
            // And a command under a route name of its own answers its state: 200, nothing recorded.
            let count = try await client.post("/apps/note-stats/count", "")
            #expect(count.status == .ok)
            #expect(canonical(count.object) == canonical(["head": 1]))
            // And only one note was recorded; the seed apps' routes are not there.
            #expect(try await client.head() == 1)
            for path in ["/apps/chat/say", "/apps/fitness/start", "/chat/say"] {
                let reply = try await client.post(path, #"{"user":"u","text":"hi"}"#)
                #expect(reply.status == .notFound, "\(path): \(reply.text)")
            }
        }
    }

    @Test("modules that cannot be served together, or on a store without their upcasters, are refused when the server is made")
    func refusesClashes() async throws {
        try await TemporaryStore.with { store in
            let runner = try await ProjectionRunner(store: store, projections: [])
            let cases: [(apps: [any AppModule], message: String)] = [
                ([Named(name: "notes"), Named(name: "notes")], "Two apps are named 'notes'; each app needs a name of its own."),
                ([Named(name: "Notes")], "The app name 'Notes' is not one a route can carry; use 1 to 64 lowercase letters, digits and single dashes, starting with a letter."),
                ([NotesApp(), Named(name: "note-stats"), NotesApp.Rename()], "Two commands are named 'notes/add'; each needs a route of its own."),
                ([Named(name: "none")], "An app may not be named 'none': --apps reads that word as a choice of apps."),
                ([Named(name: "a--b")], "The app name 'a--b' is not one a route can carry; use 1 to 64 lowercase letters, digits and single dashes, starting with a letter."),
                ([NotesApp.TwiceField()], "The command 'twice/add' declares the field 'x' twice; declare each field once."),
                ([NotesApp.OddField()], "The command 'odd-field/add' declares a field named 'a b'; use 1 to 64 letters, digits, '_' and '-', starting with a letter."),
            ]
            for (apps, message) in cases {
                let error = #expect(throws: ServerError.self) { try Server(store: store, runner: runner, apps: apps) }
                #expect(error?.code == .invalidConfiguration)
                #expect(error?.message == message)
            }
            // A store opened without the campground's upcasters cannot serve the campground.
            let error = #expect(throws: ServerError.self) { try Server(store: store, runner: runner, apps: [CampgroundApp()]) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message.contains("upcaster") == true, "\(String(describing: error))")
        }
    }
}

extension NotesApp {
    /// A command that declares one field twice.
    fileprivate struct TwiceField: AppModule {
        let name = "twice"
        func commands(_ context: AppContext) throws -> [AppCommand] {
            [AppCommand("add", fields: [AppField("x", .string), AppField("x", .integer)]) { _ in .events([]) }]
        }
    }

    /// A command whose field's name no client could send as a key it expects.
    fileprivate struct OddField: AppModule {
        let name = "odd-field"
        func commands(_ context: AppContext) throws -> [AppCommand] {
            [AppCommand("add", fields: [AppField("a b", .string)]) { _ in .events([]) }]
        }
    }

    /// A module of another name whose command takes the notes' route.
    fileprivate struct Rename: AppModule {
        let name = "renamed"
        func commands(_ context: AppContext) throws -> [AppCommand] {
            [AppCommand("add", app: "notes") { _ in .events([]) }]
        }
    }
}
