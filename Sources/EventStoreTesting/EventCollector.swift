import EventStore
import Synchronization

/// Why awaiting a subscription failed: what was expected, how long it was awaited, and what did
/// arrive, so a failing test says what never came.
public struct AwaitFailure: Error, CustomStringConvertible {
    public let description: String

    /// A failure that says, in one sentence, what never arrived.
    public init(description: String) {
        self.description = description
    }
}

/// Consumes a subscription in the background and lets a test await what it delivers, always
/// under a timeout: the next N events, the first event matching a predicate, or the proof that
/// nothing more arrived up to a position.
public final class EventCollector: Sendable {
    private struct State: Sendable {
        var events: [RecordedEvent] = []
        /// When each event arrived, on the continuous clock (for failure messages).
        var arrivals: [ContinuousClock.Instant] = []
        /// How many events the test has taken so far.
        var taken = 0
        var caughtUpThrough: UInt64 = 0
        var ending: String?
    }

    private let state = AwaitableState(State())
    private let consumer = Mutex<Task<Void, Never>?>(nil)

    /// Starts consuming a subscription with progress (needed for ``expectNothingMore(through:matching:within:)``).
    public init(_ subscription: ProgressSubscription) {
        let task = Task { [state] in
            do {
                for try await message in subscription {
                    state.update { state in
                        switch message {
                        case let .event(event):
                            state.events.append(event)
                            state.arrivals.append(.now)
                            state.caughtUpThrough = max(state.caughtUpThrough, event.position)
                        case let .caughtUp(through):
                            state.caughtUpThrough = max(state.caughtUpThrough, through)
                        }
                    }
                }
                state.update { $0.ending = "the subscription ended" }
            } catch {
                state.update { $0.ending = "the subscription failed: \(error)" }
            }
        }
        consumer.withLock { $0 = task }
    }

    /// Starts consuming a subscription.
    public convenience init(_ subscription: Subscription) {
        self.init(subscription.withProgress)
    }

    deinit {
        consumer.withLock { $0?.cancel() }
    }

    /// Stops consuming (cancels the consuming task).
    public func cancel() {
        consumer.withLock { $0?.cancel() }
    }

    /// Every event received so far, taken or not.
    public var received: [RecordedEvent] { state.withValue { $0.events } }

    /// Waits for the next `count` events not yet taken and takes them.
    public func take(_ count: Int, within timeout: Duration = .seconds(10)) async throws -> [RecordedEvent] {
        try await waitUntil(timeout, "\(count) more event(s)") { $0.events.count - $0.taken >= count || $0.ending != nil }
        return try state.withValue { state in
            guard state.events.count - state.taken >= count else {
                throw AwaitFailure(description: "Expected \(count) more event(s), but \(state.ending ?? "none came"); \(Self.describeUntaken(state))")
            }
            defer { state.taken += count }
            return Array(state.events[state.taken..<(state.taken + count)])
        }
    }

    /// Waits for an event matching `predicate`, taking it and every event before it.
    public func take(
        firstMatching predicate: @escaping @Sendable (RecordedEvent) -> Bool, within timeout: Duration = .seconds(10)
    ) async throws -> RecordedEvent {
        try await waitUntil(timeout, "an event matching the predicate") { state in
            state.events[state.taken...].contains(where: predicate) || state.ending != nil
        }
        return try state.withValue { state in
            guard let index = state.events[state.taken...].firstIndex(where: predicate) else {
                throw AwaitFailure(description: "No event matched, and \(state.ending ?? "none came"); \(Self.describeUntaken(state))")
            }
            state.taken = index + 1
            return state.events[index]
        }
    }

    /// Waits for the positive signal that the subscription has examined every position up to
    /// `position`, then checks that no event matching `predicate` arrived beyond those taken.
    /// No sleeping for a guess: anything that was going to arrive up to `position` has arrived.
    public func expectNothingMore(
        through position: UInt64, matching predicate: @escaping @Sendable (RecordedEvent) -> Bool = { _ in true },
        within timeout: Duration = .seconds(10)
    ) async throws {
        try await waitUntil(timeout, "the subscription to reach position \(position)") {
            $0.caughtUpThrough >= position || $0.ending != nil
        }
        try state.withValue { state in
            guard state.caughtUpThrough >= position else {
                throw AwaitFailure(description: "The subscription never reached position \(position): \(state.ending ?? "it stopped")")
            }
            let unexpected = state.events[state.taken...].filter { $0.position <= position && predicate($0) }
            guard unexpected.isEmpty else {
                throw AwaitFailure(description: "Expected nothing more through position \(position), but got: \(unexpected.map(Self.describe).joined(separator: "; "))")
            }
        }
    }

    private func waitUntil(_ timeout: Duration, _ what: String, _ condition: @escaping @Sendable (State) -> Bool) async throws {
        do {
            try await state.wait(timeout, what, until: condition)
        } catch let error as TimeoutError {
            let arrived = state.withValue { Self.describeUntaken($0) }
            throw AwaitFailure(description: "\(error) \(arrived)")
        }
    }

    private static func describeUntaken(_ state: State) -> String {
        let now = ContinuousClock.now
        let untaken = state.events.indices[state.taken...].map { index in
            "\(describe(state.events[index])) (arrived \(Self.seconds(state.arrivals[index].duration(to: now))) s ago)"
        }
        let list = untaken.isEmpty ? "nothing" : untaken.joined(separator: "; ")
        return "Arrived and not yet taken: \(list) (caught up through \(state.caughtUpThrough))."
    }

    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return "\(milliseconds / 1000).\(String(milliseconds % 1000 / 100))"
    }

    static func describe(_ event: RecordedEvent) -> String {
        "#\(event.position) \(event.stream)@\(event.version) \(event.type)"
    }
}
