import Commands
import Testing

/// Given these past events, when this command, then these events (or this error): a
/// `Decider`'s rules checked as plain values, with no store, in Swift Testing.
///
/// ```swift
/// @Test func addingTwiceIsRefused() {
///     DeciderScenario(TodoDecider(list: "home"))
///         .given(.added(ItemAdded(item: "pen")))
///         .when(.add("pen"))
///         .thenThrows(TodoError.alreadyListed("pen"))
/// }
/// ```
///
/// A failed expectation is recorded as a Swift Testing issue at the caller's line.
public struct DeciderScenario<D: Decider>: Sendable {
    /// The decider under test.
    public let decider: D
    /// The past events, oldest first.
    public let history: [D.Event]

    /// A scenario with no past events.
    public init(_ decider: D) {
        self.decider = decider
        history = []
    }

    private init(_ decider: D, history: [D.Event]) {
        self.decider = decider
        self.history = history
    }

    /// The scenario with `events` added to its past.
    public func given(_ events: D.Event...) -> Self { given(events) }

    /// The scenario with `events` added to its past.
    public func given(_ events: [D.Event]) -> Self { DeciderScenario(decider, history: history + events) }

    /// The state the past folds into.
    public var state: D.State {
        var state = decider.initialState
        for event in history { decider.evolve(&state, with: event) }
        return state
    }

    /// Decides `command` on the state of the past.
    public func when(_ command: D.Command) -> DeciderOutcome<D> {
        let state = self.state
        do {
            let events = try decider.decide(command, state: state)
            var after = state
            for event in events { decider.evolve(&after, with: event) }
            return DeciderOutcome(result: .success(events), stateAfter: after)
        } catch {
            return DeciderOutcome(result: .failure(error), stateAfter: state)
        }
    }
}

/// What a ``DeciderScenario``'s command decided, to check with `then...`.
public struct DeciderOutcome<D: Decider>: Sendable {
    /// The events decided, or what `decide` threw.
    public let result: Result<[D.Event], any Error>
    /// The state after the decided events (the state before, when it threw).
    public let stateAfter: D.State

    /// The decided events, or nil (recording an issue) when the command was refused.
    @discardableResult
    public func events(sourceLocation: SourceLocation = #_sourceLocation) -> [D.Event]? {
        switch result {
        case .success(let events): return events
        case .failure(let error):
            Issue.record("Expected events, but the command was refused: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }
}

extension DeciderOutcome where D.Event: Equatable {
    /// Expects exactly `expected`, in order.
    public func then(_ expected: [D.Event], sourceLocation: SourceLocation = #_sourceLocation) {
        guard let events = events(sourceLocation: sourceLocation) else { return }
        if events != expected {
            Issue.record("Expected \(expected), but the command decided \(events)", sourceLocation: sourceLocation)
        }
    }

    /// Expects exactly `expected`, in order.
    public func then(_ expected: D.Event..., sourceLocation: SourceLocation = #_sourceLocation) {
        then(expected, sourceLocation: sourceLocation)
    }

    /// Expects that nothing is decided (the command has nothing to do).
    public func thenNothing(sourceLocation: SourceLocation = #_sourceLocation) {
        then([], sourceLocation: sourceLocation)
    }
}

extension DeciderOutcome {
    /// Expects the command refused with exactly `expected`.
    public func thenThrows<E: Error & Equatable>(_ expected: E, sourceLocation: SourceLocation = #_sourceLocation) {
        thenThrows(E.self, sourceLocation: sourceLocation) { error in
            if error != expected {
                Issue.record("Expected the refusal \(expected), but got \(error)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Expects the command refused with an `E`, and hands it to `check` for more expectations.
    public func thenThrows<E: Error>(
        _ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, _ check: (E) -> Void = { _ in }
    ) {
        switch result {
        case .success(let events):
            Issue.record("Expected a refusal (\(E.self)), but the command decided \(events)", sourceLocation: sourceLocation)
        case .failure(let error as E):
            check(error)
        case .failure(let error):
            Issue.record("Expected a refusal of type \(E.self), but got \(Swift.type(of: error)): \(error)", sourceLocation: sourceLocation)
        }
    }
}

extension DeciderOutcome where D.State: Equatable {
    /// Expects the state after the decided events to be `expected`.
    public func thenState(_ expected: D.State, sourceLocation: SourceLocation = #_sourceLocation) {
        if stateAfter != expected {
            Issue.record("Expected the state \(expected), but it is \(stateAfter)", sourceLocation: sourceLocation)
        }
    }
}
