import Commands
import EventStoreCore
import Projections

/// The to-do app: commands through the generic handler, the open items through a projection.
public final class TodoApp: Sendable {
    public let store: any EventLog
    let handler: CommandHandler
    let runner: ProjectionRunner

    /// The app over `store`, with its projection registered (rebuilt when its version changes).
    public init(store: any EventLog) async throws {
        self.store = store
        handler = CommandHandler(store: store)
        runner = try await ProjectionRunner(store: store, projections: [OpenItemsProjection()])
    }

    /// Runs a command on `list`; returns the list after it. Throws ``TodoError`` when the rules
    /// refuse it (nothing recorded), and the store's errors.
    @discardableResult
    public func run(_ command: TodoCommand, on list: String) async throws -> TodoList {
        try await handler.handle(command, with: TodoDecider(list: list)).state
    }

    /// The open items of `list`, caught up with every command run before.
    public func openItems(of list: String) async throws -> [String] {
        try await runner.read(OpenItemsProjection.self) { state in try await OpenItemsProjection.openItems(of: list, in: state) }
    }
}
