import EventStore
import EventStoreTesting
import Projections
import Testing
import Todo

/// The app end to end, on a temporary store with known times and ids.
@Suite("To-do app")
struct TodoAppTests {
    @Test("commands are recorded, refusals record nothing, and the projection lists the open items", .temporaryStore)
    func endToEnd() async throws {
        let store = try #require(TemporaryStore.current)
        let app = try await TodoApp(store: store)
        try await app.run(.add("milk"), on: "home")
        try await app.run(.add("bread"), on: "home")
        try await app.run(.add("report"), on: "work")
        await #expect(throws: TodoError.alreadyListed("milk")) { try await app.run(.add("milk"), on: "home") }
        let home = try await app.run(.complete("milk"), on: "home")
        #expect(home == TodoList(open: ["bread"], done: ["milk"]))
        #expect(try await app.openItems(of: "home") == ["bread"])
        #expect(try await app.openItems(of: "work") == ["report"])
        #expect(try store.read(limit: 10).map(\.type) == ["ItemAdded", "ItemAdded", "ItemAdded", "ItemCompleted"])
        #expect(try store.read(limit: 10).map(\.id) == (1...4).map(SequentialIDs.id))
    }

    @Test("a rebuild of the projection gives the state built live", .temporaryStore)
    func rebuild() async throws {
        let store = try #require(TemporaryStore.current)
        let app = try await TodoApp(store: store)
        for item in ["a", "b", "c"] { try await app.run(.add(item), on: "home") }
        try await app.run(.remove("b"), on: "home")
        let runner = try await ProjectionRunner(store: store, projections: [OpenItemsProjection()])
        #expect(try await runner.query(OpenItemsProjection.self, parameters: ["list": "home"]) == [
            ["list": "home", "item": "a"], ["list": "home", "item": "c"],
        ])
        let live = try await runner.storedHash(of: "open-items")
        #expect(try await runner.rebuild().map(\.hash) == [live])
    }

    @Test("the completion log sees each completed item once, as it is committed", .temporaryStore)
    func reaction() async throws {
        let store = try #require(TemporaryStore.current)
        let app = try await TodoApp(store: store)
        let (completions, seen) = AsyncStream<String>.makeStream()
        let follower = Task {
            try await CompletionLog(store: store).follow { item, _ in seen.yield(item) }
        }
        defer { follower.cancel() }
        try await app.run(.add("milk"), on: "home")
        try await app.run(.complete("milk"), on: "home")
        try await app.run(.add("report"), on: "work")
        try await app.run(.complete("report"), on: "work")
        let firstTwo = try await withTimeout(.seconds(10), "two completed items from the completion log") {
            var items: [String] = []
            for await item in completions {
                items.append(item)
                if items.count == 2 { break }
            }
            return items
        }
        #expect(firstTwo == ["milk", "report"])
    }
}
