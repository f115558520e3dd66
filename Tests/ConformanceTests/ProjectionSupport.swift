@testable import Projections
import EventStore
import Foundation
import Synchronization
import Testing

/// Runs `body` with the runner's daemon going, then stops the daemon and waits until it has
/// ended: a daemon left running would keep the store open past its test.
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

/// Reacts to each "OrderPlaced" with a "MailDue" in the order's mail stream; fails on the
/// event at `failing` (a crash between handling and committing, as far as the store can tell).
struct Mailer: Processor {
    let name = "mailer"
    let eventTypes: Set<String>? = ["OrderPlaced"]
    var failing: UInt64? = nil
    let reactions = Counter()

    struct Crash: Error {}

    func react(to event: RecordedEvent) throws -> [StreamAppend] {
        reactions.add()
        if event.position == failing { throw Crash() }
        return [StreamAppend(stream: "mail-\(event.stream)", events: [NewEvent(type: "MailDue", data: Data(#"{"for":\#(event.position)}"#.utf8))])]
    }
}

/// A count several tasks add to.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

extension ProjectionState {
    func hashFor(_ projection: some Projection) async throws -> String {
        try await StateHash.of(projection, in: reader)
    }
}

/// Every stored row of the projections' serving states, as bytes.
func dump(_ log: any EventLog, _ projections: [any Projection]) async throws -> [[UInt8]] {
    try await log.readTables { txn in
        var rows: [[UInt8]] = []
        for projection in projections {
            let state = try await StoredState.serving(txn, projection.name)
            for table in projection.tables { rows += try await state.rawRows(table).map { $0.key + [0xFF] + $0.value } }
        }
        return rows
    }
}
