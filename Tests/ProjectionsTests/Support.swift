import Apps
import EventStore
import Foundation
import Projections
import TestSupport

/// A store in a temporary directory with deterministic time and ids, for projection tests.
final class ProjectionFixture: Sendable {
    let directory: TemporaryDirectory
    let clock = SteppingClock()
    let ids = SequentialIDs()
    let store: EventStore
    var path: String { directory.appending("store") }

    init() throws {
        directory = try TemporaryDirectory(prefix: "projections-test")
        store = try EventStore(path: directory.appending("store"), configuration: Self.configuration(clock, ids))
    }

    static func configuration(_ clock: SteppingClock, _ ids: SequentialIDs) -> Configuration {
        Configuration(durability: .noSync, clock: { clock.now() }, idGenerator: { ids.next() })
    }

    /// Closes the store and opens the directory again.
    func reopen() throws -> EventStore {
        store.close()
        return try EventStore(path: path, configuration: Self.configuration(clock, ids))
    }
}

func event(_ type: String, _ json: String = "{}") -> NewEvent {
    NewEvent(type: type, data: Data(json.utf8))
}

/// A test projection with deletes: accounts get "Opened", "Deposited" {amount}, "Closed".
/// A deposit to an unknown account throws, and so does the type "Poison".
struct Ledger: Projection {
    var name = "ledger"
    var version = 1
    let tables = ["accounts", "totals"]
    var errorPolicy: ProjectionErrorPolicy = .stop
    let eventTypes: Set<String>? = ["Opened", "Deposited", "Closed", "Poison"]
    let queryParameters: [QueryParameter] = []

    struct Unknown: Error, CustomStringConvertible {
        let description: String
    }

    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        let key = RowKey(event.stream)
        // Every event moves the total first, so a failed apply must undo a change.
        let total = try state.get("totals", RowKey("all"), as: Int.self) ?? 0
        try state.put("totals", RowKey("all"), total + 1)
        switch event.type {
        case "Opened":
            try state.put("accounts", key, 0)
        case "Deposited":
            guard let balance = try state.get("accounts", key, as: Int.self) else {
                throw Unknown(description: "no account '\(event.stream)'")
            }
            let amount = (try? JSONValue(parsing: Array(event.data)))?["amount"]?.intValue ?? 0
            try state.put("accounts", key, balance + Int(amount))
        case "Closed":
            try state.delete("accounts", key)
        default:
            throw Unknown(description: "poisoned")
        }
    }

    func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let accounts = try state.rows("accounts", as: Int.self).map { ($0.key.parts([.string])?.first?.string ?? "?", JSONValue.int($0.value)) }
        return ["accounts": .object(accounts), "events": .int(try state.get("totals", RowKey("all"), as: Int.self) ?? 0)]
    }
}

/// Runs `body` with the runner's daemon going, then stops the daemon and waits until it has
/// ended: a daemon left running would keep the store open past its test's directory.
func withDaemon<T>(_ runner: ProjectionRunner, processors: [any Processor] = [], _ body: () async throws -> T) async throws -> T {
    let live = runner.runLive(processors: processors)
    do {
        let result = try await body()
        live.cancel()
        await live.value
        return result
    } catch {
        live.cancel()
        await live.value
        throw error
    }
}
