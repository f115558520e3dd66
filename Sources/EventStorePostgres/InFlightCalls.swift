import Synchronization

/// The calls of a handle that hold or wait for a connection of its pool (reads, table
/// transactions, deletions), counted so that `close()` lets them finish
/// before it closes the pool, as LMDB's close lets running reads and queued writes finish.
final class InFlightCalls: Sendable {
    private struct State {
        var count = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// Runs `body`, counted in while it runs.
    func run<R>(_ body: () async throws -> R) async throws -> R {
        state.withLock { $0.count += 1 }
        defer { leave() }
        return try await body()
    }

    private func leave() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count -= 1
            guard state.count == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when no call is running (at once when none is).
    func finished() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.count == 0 { return true }
                state.waiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }
}
