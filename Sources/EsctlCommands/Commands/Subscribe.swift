import ArgumentParser
import EventStore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct Subscribe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print events as they are committed, by this or any other process.",
        discussion: """
            Starts at the end of the log unless --from P|start|end (or --from-start) says otherwise, as \
            GET /subscribe's `from` does, says on standard \
            error where it starts, then prints each event (in replay's line format) as it arrives, \
            flushed at once so a pipe sees it. With --count N it exits 0 after N events. With \
            --timeout it exits 75 when the time runs out, saying how many events arrived. Ctrl-C \
            ends it cleanly with exit code 130. Commits of other processes are noticed within \
            about 5 ms.
            """)

    @OptionGroup var store: StoreOptions

    @Option(
        help: ArgumentHelp("Where to start: a position (inclusive), start (the first event) or end (only new events).", valueName: "P|start|end"),
        transform: { text in
            switch text {
            case "start": return SubscriptionStart.start
            case "end": return SubscriptionStart.end
            default:
                guard let position = UInt64(text) else {
                    throw ValidationError("--from takes a position (a whole number of 0 or more), start or end; '\(text)' is none of them.")
                }
                return SubscriptionStart.position(position)
            }
        })
    var from: SubscriptionStart?

    @Flag(name: .customLong("from-start"), help: "Start at the first event of the log.")
    var fromStart = false

    @Flag(name: .customLong("from-end"), help: "Start after the last event: only new events (the default).")
    var fromEnd = false

    @Option(help: ArgumentHelp("Only events of this stream.", valueName: "S"))
    var stream: String?

    @OptionGroup var filters: FilterOptions

    @Option(help: ArgumentHelp("Exit 0 after N events.", valueName: "N"), transform: Numbers.whole("--count", 1...Int.max))
    var count: Int?

    @Option(
        help: ArgumentHelp("Exit 75 if the events have not all arrived after this many seconds.", valueName: "SECONDS"),
        transform: Numbers.decimal("--timeout", 0.001...31_536_000))
    var timeout: Double?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    func validate() throws {
        if [from != nil, fromStart, fromEnd].filter({ $0 }).count > 1 {
            throw ValidationError("Give at most one of --from, --from-start and --from-end.")
        }
    }

    @Flag(
        name: .customLong("as-stored"),
        help: "Print events as stored: the type and data they were recorded with, not upcast to their newest shape.")
    var asStored = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openReadOnly(asStored: asStored)
            return try await store.closingAfter {
                let start: SubscriptionStart = fromStart ? .start : from ?? .end
                let subscription = store.subscribe(from: start, filter: filters.filter(stream: stream))
                let firstPosition: UInt64
                switch start {
                case .start: firstPosition = 1
                case let .position(position): firstPosition = max(position, 1)
                case .end: firstPosition = try await store.headPosition() + 1
                }
                Console.note("\(Console.toolName): subscribed from position \(firstPosition)\n")

                let session = Session()
                let json = self.json
                let wanted = count
                let consumer = Task {
                    for try await event in subscription {
                        Console.printEvent(event, json: json)
                        Console.flush()
                        let total = session.received.add(1, ordering: .relaxed).newValue
                        if let wanted, total >= wanted { return }
                    }
                }
                let interrupt = Interrupts.onSignals {
                    session.end(.interrupted)
                    consumer.cancel()
                }
                defer { interrupt.cancel() }
                var timer: Task<Void, any Error>?
                if let timeout {
                    timer = Task {
                        try await Task.sleep(for: .seconds(timeout))
                        session.end(.timedOut)
                        consumer.cancel()
                    }
                }
                defer { timer?.cancel() }

                try await consumer.value
                let total = session.received.load(ordering: .relaxed)
                if let wanted, total >= wanted { return }
                switch session.ending {
                case .timedOut?:
                    let seconds = timeout.map { $0 == $0.rounded() ? String(Int($0)) : String($0) } ?? "?"
                    let arrived = wanted.map { "\(total) of \($0) events arrived" } ?? "\(total) event\(total == 1 ? "" : "s") arrived"
                    throw CLIError(.timedOut, "Timed out after \(seconds) s: \(arrived).")
                case .interrupted?:
                    throw ExitCode(Interrupts.exitStatus.rawValue)
                case nil:
                    return
                }
            }
        }
    }

    private enum Ending { case timedOut, interrupted }

    /// What the consuming task, the timer and the Ctrl-C handler share.
    private final class Session: Sendable {
        let received = Atomic<Int>(0)
        private let reason = Mutex<Ending?>(nil)

        /// The first reason the subscription was ended for, if any.
        var ending: Ending? { reason.withLock { $0 } }

        func end(_ why: Ending) {
            reason.withLock { $0 = $0 ?? why }
        }
    }
}
