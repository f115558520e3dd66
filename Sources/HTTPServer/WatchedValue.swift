import Synchronization

/// A value that tasks can wait on: ``wait(until:)`` returns once the value satisfies a
/// condition (at once when it does now), or when the waiting task is cancelled. What
/// ``OpenStreams`` and ``StopSignal`` are made of.
final class WatchedValue<Value: Sendable>: Sendable {
    private struct Waiter {
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var value: Value
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    /// The value now.
    var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes the waiters whose condition it now satisfies.
    func update(_ change: (inout Value) -> Void) {
        let ready = state.withLock { state -> [Waiter] in
            change(&state.value)
            let value = state.value
            let ready = state.waiters.filter { $0.value.condition(value) }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return Array(ready.values)
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Waits until the value satisfies `condition`. Returns early, without it holding, when the
    /// task is cancelled: check ``value`` after when that matters.
    func wait(until condition: @escaping @Sendable (Value) -> Bool) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    // Checked under the lock: a cancellation that came before this registration
                    // found nothing to remove, so it is honoured here.
                    if condition(state.value) || Task.isCancelled { return true }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume()
        }
    }
}
