import Synchronization

/// The first of several racing outcomes (work, a timer, a cancellation), handed to the one
/// caller that waits for it: ``finish(_:)`` may come before or after ``wait(_:)``, and every
/// outcome after the first is dropped (its maker learns so, to clean up what it made).
package final class FirstOutcome<T: Sendable>: Sendable {
    private struct State {
        var outcome: Result<T, any Error>?
        var waiter: CheckedContinuation<T, any Error>?
    }
    private let state = Mutex(State())

    package init() {}

    /// Records `outcome` unless another came first, and resumes the waiter with it; returns
    /// whether it was the first.
    @discardableResult
    package func finish(_ outcome: Result<T, any Error>) -> Bool {
        let (first, waiter) = state.withLock { state -> (Bool, CheckedContinuation<T, any Error>?) in
            guard state.outcome == nil else { return (false, nil) }
            state.outcome = outcome
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(with: outcome)
        return first
    }

    /// Resumes `continuation` with the first outcome, at once if there is one already.
    package func wait(_ continuation: CheckedContinuation<T, any Error>) {
        let ready = state.withLock { state -> Result<T, any Error>? in
            if let outcome = state.outcome { return outcome }
            state.waiter = continuation
            return nil
        }
        if let ready { continuation.resume(with: ready) }
    }

    /// Whether an outcome has come.
    package var isFinished: Bool { state.withLock { $0.outcome != nil } }
}
