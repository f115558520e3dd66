import EventStore

/// Runs a decision against the store: loads the streams it reads, decides (pure), appends what
/// it decided with the versions it read as expectations, and on a version conflict loads again
/// and decides again, a bounded number of times.
struct CommandHandler: Sendable {
    let store: EventStore
    let maximumAttempts: Int

    /// The streams' events as loaded, keyed by stream name.
    typealias Loaded = [String: [RecordedEvent]]

    /// What a decision appends (per stream, in order) and what it tells the caller.
    struct Decision<Value> {
        var appends: [(stream: String, events: [NewEvent])]
        var value: Value
    }

    /// Loads `streams`, runs `decide`, appends atomically; returns the decision's value and the
    /// events recorded (empty when it decided nothing). Throws what `decide` throws, the store's
    /// errors, or ``CommandError/Code/conflict`` when every attempt met a conflict.
    func run<Value>(
        _ streams: [String], _ decide: (Loaded) throws -> Decision<Value>
    ) async throws -> (value: Value, recorded: [RecordedEvent]) {
        for _ in 0..<maximumAttempts {
            var loaded: Loaded = [:]
            var versions: [String: UInt64] = [:]
            for stream in streams {
                let events = try store.readStream(stream)
                loaded[stream] = events
                versions[stream] = events.last?.version ?? 0
            }
            let decision = try decide(loaded)
            let appends = decision.appends.filter { !$0.events.isEmpty }.map { append in
                StreamAppend(stream: append.stream, events: append.events, expectedVersion: .exact(versions[append.stream] ?? 0))
            }
            guard !appends.isEmpty else { return (decision.value, []) }
            do {
                let results = try await store.append(appends)
                let recorded = try results.flatMap(\.positions).compactMap { try store.event(at: $0) }
                return (decision.value, recorded)
            } catch let error as EventStoreError where error.code == .versionConflict {
                continue
            }
        }
        throw CommandError(
            .conflict, "Other writers kept changing \(streams.joined(separator: " and ")) during \(maximumAttempts) attempts; try again.")
    }
}
