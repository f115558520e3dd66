import Synchronization

/// A value that changes over time, and lets tasks wait, under a timeout, until a condition on it
/// holds: the shared core of ``EventCollector`` and the test suites' `RunningProcess`.
public final class AwaitableState<Value: Sendable>: Sendable {
    private struct Waiter {
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct Box {
        var value: Value
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let box: Mutex<Box>

    public init(_ value: Value) {
        box = Mutex(Box(value: value))
    }

    /// Reads (or changes without waking anyone) the value under the lock.
    public func withValue<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try box.withLock { box in try body(&box.value) }
    }

    /// Changes the value and wakes every waiter whose condition now holds.
    public func update(_ change: (inout Value) -> Void) {
        let ready = box.withLock { box -> [CheckedContinuation<Void, Never>] in
            change(&box.value)
            let value = box.value
            let satisfied = box.waiters.filter { $0.value.condition(value) }
            for id in satisfied.keys { box.waiters.removeValue(forKey: id) }
            return satisfied.values.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }

    /// Waits until `condition` holds, or throws ``TimeoutError`` naming `what` after `timeout`.
    public func wait(_ timeout: Duration, _ what: String, until condition: @escaping @Sendable (Value) -> Bool) async throws {
        try await withTimeout(timeout, what) { [self] in
            let id = box.withLock { box -> UInt64 in
                box.nextID += 1
                return box.nextID
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = box.withLock { box -> Bool in
                        if condition(box.value) || Task.isCancelled { return true }
                        box.waiters[id] = Waiter(condition: condition, continuation: continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                box.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
            }
        }
    }
}
