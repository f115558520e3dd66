import EventStore
import Foundation
import Todo

// A short run of the to-do app on a store in a fresh temporary directory: a few commands, one
// refused, a reaction to completed items, and the open items as the projection has them.
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("todo-example-\(ProcessInfo.processInfo.processIdentifier)")
defer { try? FileManager.default.removeItem(at: directory) }
let store = try EventStore(path: directory.path)
defer { store.close() }
let app = try await TodoApp(store: store)

// The reaction runs beside the commands and tells this task what it saw.
let (completions, seen) = AsyncStream<String>.makeStream()
let reactions = Task {
    try await CompletionLog(store: store).follow { item, event in
        print("done: \(item) (position \(event.position))")
        seen.yield(item)
    }
}

try await app.run(.add("buy milk"), on: "home")
try await app.run(.add("call the plumber"), on: "home")
try await app.run(.add("file the report"), on: "work")
do {
    try await app.run(.add("buy milk"), on: "home")
} catch let refusal as TodoError {
    print("refused: \(refusal)")
}
let home = try await app.run(.complete("buy milk"), on: "home")
print("home: open \(home.open), done \(home.done)")
print("open at home, from the projection: \(try await app.openItems(of: "home"))")

// Wait for the reaction to see the completion, then stop it.
for await item in completions where item == "buy milk" { break }
reactions.cancel()
_ = await reactions.result
