import Commands
import EventStore
import Foundation
import Dispatch
import Synchronization
import Testing

/// A small decider for the handler's tests: a todo list in one stream, with an optional archive
/// stream that completed items are copied to (so one command writes two streams), and a hook
/// that runs inside `decide` (to let "another writer" in between the load and the append).
struct ItemAdded: EventData, Equatable {
    static let eventType = "ItemAdded"
    var item: String
}

struct ItemCompleted: EventData, Equatable {
    static let eventType = "ItemCompleted"
    var item: String
}

/// A note to the list's outbox stream, which the decider writes but never reads; recorded with
/// the id the command gives (a client's request id), so that a retried request is idempotent.
struct NoteSent: EventData, Equatable {
    static let eventType = "NoteSent"
    var text: String
}

/// A number JSON cannot hold, to make an event that does not encode.
struct Measured: EventData, Equatable {
    static let eventType = "Measured"
    var value: Double
}

enum TodoEvent: RecordableEvent, Equatable {
    case added(ItemAdded)
    case completed(ItemCompleted)
    case archived(ItemCompleted)
    case measured(Measured)
    case noted(NoteSent, id: UUID)

    init(recorded event: RecordedEvent) throws(EventDecodingError) {
        switch event.type {
        case ItemAdded.eventType: self = .added(try ItemAdded(recorded: event))
        case ItemCompleted.eventType where event.stream.hasPrefix("archive-"): self = .archived(try ItemCompleted(recorded: event))
        case ItemCompleted.eventType: self = .completed(try ItemCompleted(recorded: event))
        case Measured.eventType: self = .measured(try Measured(recorded: event))
        case NoteSent.eventType: self = .noted(try NoteSent(recorded: event), id: event.id)
        default: throw EventDecodingError(event, reason: "\(event.type) is not a todo event")
        }
    }

    func newEvent() throws -> NewEvent {
        switch self {
        case .added(let event): try event.newEvent()
        case .completed(let event), .archived(let event): try event.newEvent()
        case .measured(let event): try event.newEvent()
        case .noted(let event, let id): try event.newEvent(id: id)
        }
    }
}

enum TodoCommand: Sendable {
    case add(String)
    case complete(String)
    case measure(Double)
    /// Sends a note with a request id: the event's id.
    case note(String, id: UUID)
    case nothing
}

struct TodoRefused: Error, Equatable {
    let reason: String
}

struct TodoState: Sendable, Equatable, Codable {
    var open: [String] = []
    var done: [String] = []
}

struct TodoDecider: SnapshotDecider {
    let list: String
    let snapshotName = "todo"
    var snapshotVersion = 1
    /// Whether completed items are copied to `archive-LIST`, and the archive read back.
    var archives = false
    /// Another writer that gets in at some decisions.
    var interloper: Interloper?

    init(list: String, archives: Bool = false, interloper: Interloper? = nil) {
        self.list = list
        self.archives = archives
        self.interloper = interloper
    }

    var initialState: TodoState { TodoState() }
    var streams: [String] { archives ? ["todo-\(list)", "archive-\(list)"] : ["todo-\(list)"] }

    func stream(for event: TodoEvent) -> String {
        if case .archived = event { return "archive-\(list)" }
        if case .noted = event { return "outbox-\(list)" }
        return "todo-\(list)"
    }

    func evolve(_ state: inout TodoState, with event: TodoEvent) {
        switch event {
        case .added(let added): state.open.append(added.item)
        case .completed(let completed):
            state.open.removeAll { $0 == completed.item }
            state.done.append(completed.item)
        case .archived, .measured, .noted: break
        }
    }

    func decide(_ command: TodoCommand, state: TodoState) throws -> [TodoEvent] {
        interloper?.decided()
        switch command {
        case .add(let item):
            guard !state.open.contains(item) else { throw TodoRefused(reason: "\(item) is already on the list") }
            return [.added(ItemAdded(item: item))]
        case .complete(let item):
            guard state.open.contains(item) else { throw TodoRefused(reason: "\(item) is not on the list") }
            let completed = ItemCompleted(item: item)
            return archives ? [.completed(completed), .archived(completed)] : [.completed(completed)]
        case .measure(let value):
            return [.measured(Measured(value: value))]
        case .note(let text, let id):
            return [.noted(NoteSent(text: text), id: id)]
        case .nothing:
            return []
        }
    }
}

/// Another writer that appends an item to the list while a command is being decided, at the
/// decisions it is told (1 for the first), so the handler's append meets a version conflict.
final class Interloper: Sendable {
    let store: any EventLog
    let stream: String
    let atDecisions: Set<Int>
    /// What the other writer does instead of appending to `stream` (a deletion, say), when set.
    let action: (@Sendable (any EventLog) async throws -> Void)?
    private let decisions = Atomic<Int>(0)

    init(store: any EventLog, stream: String, atDecisions: Set<Int>, action: (@Sendable (any EventLog) async throws -> Void)? = nil) {
        self.store = store
        self.stream = stream
        self.atDecisions = atDecisions
        self.action = action
    }

    var decisionCount: Int { decisions.load(ordering: .relaxed) }

    /// Appends "other-N" when this is one of its decisions, and waits (bounded) until it is in.
    /// `decide` is synchronous, so this blocks its thread while a task on the cooperative pool
    /// appends: ``withInterloperTurn(_:)`` runs the handler on a thread of its own for that.
    func decided() {
        let decision = decisions.add(1, ordering: .relaxed).newValue
        guard atDecisions.contains(decision) else { return }
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let store = store, stream = stream, action = action
        Task.detached {
            do {
                if let action {
                    try await action(store)
                } else {
                    _ = try await store.append(to: stream, events: [try ItemAdded(item: "other-\(decision)").newEvent()])
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 30) == .timedOut {
            Issue.record("The interloper's append at decision \(decision) never finished within 30 s")
        } else if let failure = failure.withLock({ $0 }) {
            Issue.record("The interloper's append at decision \(decision) failed: \(failure)")
        }
    }
}

/// Runs `body`, which handles commands with an ``Interloper``, on a serial queue of its own
/// (``DeciderExecutor``), one such test at a time: the interloper blocks the deciding thread
/// while its other writer appends, and a thread of the cooperative pool blocked so would starve
/// the tests beside it (and, on a two-core machine, the append itself).
func withInterloperTurn<R>(_ body: () async throws -> R) async throws -> R {
    await interloperTurns.acquire()
    do {
        let result = try await withTaskExecutorPreference(DeciderExecutor.shared) { try await body() }
        await interloperTurns.release()
        return result
    } catch {
        await interloperTurns.release()
        throw error
    }
}

/// One interloper test at a time (see ``withInterloperTurn(_:)``).
private let interloperTurns = PostgresSlots(slots: 1)

/// Runs tasks on a serial dispatch queue of their own, outside the cooperative thread pool.
final class DeciderExecutor: TaskExecutor {
    static let shared = DeciderExecutor()
    private let queue = DispatchQueue(label: "todo-tests.decider")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
