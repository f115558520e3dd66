import Synchronization

/// How many live streams (`/subscribe`, `/chat/room`) a server has open: a handler counts
/// itself in when its body starts and out when it has ended, however it ended (the limit, the
/// client leaving, a graceful stop, the store closing). Lets a program (or a test) see that a
/// vanished client's handler really ended.
public final class OpenStreams: Sendable {
    private struct Waiter {
        let id: UInt64
        let condition: @Sendable (Int) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var count = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The number of streams open now.
    public var count: Int { state.withLock { $0.count } }

    /// Waits until the number of open streams satisfies `condition` (at once when it does now).
    /// Returns early, without the condition holding, when the task is cancelled: bound it with a
    /// timeout and check ``count`` after.
    public func wait(until condition: @escaping @Sendable (Int) -> Bool) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if condition(state.count) || Task.isCancelled { return true }
                    state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
    }

    /// Counts a stream in.
    func opened() { change(by: 1) }

    /// Counts a stream out.
    func closed() { change(by: -1) }

    private func change(by delta: Int) {
        let ready = state.withLock { state -> [Waiter] in
            state.count += delta
            let count = state.count
            let satisfied = state.waiters.filter { $0.condition(count) }
            state.waiters.removeAll { $0.condition(count) }
            return satisfied
        }
        for waiter in ready { waiter.continuation.resume() }
    }
}
