import Commands
import EventStoreCore

/// What a user can do with a list.
public enum TodoCommand: Sendable, Equatable {
    case add(String)
    case complete(String)
    case remove(String)
}

/// Why a command was refused. Nothing is recorded.
public enum TodoError: Error, Equatable, CustomStringConvertible {
    case emptyItem
    case alreadyListed(String)
    case notListed(String)

    public var description: String {
        switch self {
        case .emptyItem: "An item needs some text."
        case .alreadyListed(let item): "'\(item)' is on the list already."
        case .notListed(let item): "'\(item)' is not on the list."
        }
    }
}

/// A list as its events tell it: the open items and the done ones, in order.
public struct TodoList: Sendable, Equatable {
    public var open: [String] = []
    public var done: [String] = []

    public init(open: [String] = [], done: [String] = []) {
        self.open = open
        self.done = done
    }
}

/// The rules of one list, kept in the stream `todo-LIST`: an item is added once, and only an
/// open item can be completed; removing takes it off whether open or done.
public struct TodoDecider: StreamDecider {
    public let list: String

    public init(list: String) {
        self.list = list
    }

    public var streams: [String] { ["todo-\(list)"] }
    public func stream(for event: TodoEvent) -> String { "todo-\(list)" }
    public var initialState: TodoList { TodoList() }

    public func evolve(_ state: inout TodoList, with event: TodoEvent) {
        switch event {
        case .added(let added):
            state.open.append(added.item)
        case .completed(let completed):
            state.open.removeAll { $0 == completed.item }
            state.done.append(completed.item)
        case .removed(let removed):
            state.open.removeAll { $0 == removed.item }
            state.done.removeAll { $0 == removed.item }
        }
    }

    public func decide(_ command: TodoCommand, state: TodoList) throws -> [TodoEvent] {
        switch command {
        case .add(let item):
            guard !item.isEmpty else { throw TodoError.emptyItem }
            guard !state.open.contains(item), !state.done.contains(item) else { throw TodoError.alreadyListed(item) }
            return [.added(ItemAdded(item: item))]
        case .complete(let item):
            guard state.open.contains(item) else { throw TodoError.notListed(item) }
            return [.completed(ItemCompleted(item: item))]
        case .remove(let item):
            guard state.open.contains(item) || state.done.contains(item) else { throw TodoError.notListed(item) }
            return [.removed(ItemRemoved(item: item))]
        }
    }
}
