import Logging
import Synchronization

/// The newest committed position this process knows of, and the subscribers waiting for it to
/// move.
///
/// The writer publishes each head it commits. Commits made by other processes are noticed by a
/// poller that runs only while someone waits: every `pollInterval` on the injected clock it asks
/// `poll` (on LMDB a cheap look at the last transaction id, on PostgreSQL the head row) for a new head.
package final class HeadSignal: Sendable {
    private struct Waiter {
        let after: UInt64
        let continuation: CheckedContinuation<UInt64, any Error>
    }

    private struct State {
        var head: UInt64
        var waiters: [UInt64: Waiter] = [:]
        /// Waiters cancelled before they registered.
        var cancelled: Set<UInt64> = []
        var nextWaiterID: UInt64 = 0
        var isClosed = false
        var isPolling = false
    }

    private let state: Mutex<State>
    private let poll: @Sendable () async throws -> UInt64?
    private let pollInterval: Duration
    private let clock: any Clock<Duration>
    private let logger: Logger

    /// `poll` returns a new head when another process may have committed, nil when nothing
    /// changed; it is called every `pollInterval` on `clock` while anyone waits.
    package init(
        head: UInt64, pollInterval: Duration, clock: any Clock<Duration>, logger: Logger,
        poll: @escaping @Sendable () async throws -> UInt64?
    ) {
        self.logger = logger
        state = Mutex(State(head: head))
        self.pollInterval = pollInterval
        self.clock = clock
        self.poll = poll
    }

    /// The newest head published.
    package var current: UInt64 { state.withLock { $0.head } }

    /// The number of tasks waiting (for tests).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Publishes a head; heads only move forward, so an older one is ignored. Wakes every waiter
    /// it satisfies.
    package func publish(_ newHead: UInt64) {
        let woken = state.withLock { state -> [CheckedContinuation<UInt64, any Error>] in
            guard newHead > state.head else { return [] }
            state.head = newHead
            let ready = state.waiters.filter { $0.value.after < newHead }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return ready.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume(returning: newHead) }
    }

    /// Waits until the head is past `position` and returns it. Throws `CancellationError` when the
    /// task is cancelled and ``EventStoreError/Code/closed`` when the store closes.
    package func wait(after position: UInt64) async throws -> UInt64 {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        // A cancellation that lands after the wait ended leaves its mark; clear it.
        defer { _ = state.withLock { $0.cancelled.remove(id) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Registration { case immediate(UInt64), failure(any Error), waiting(startPoller: Bool) }
                let registration = state.withLock { state -> Registration in
                    if state.isClosed { return .failure(EventStoreError.closedStore) }
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if state.head > position { return .immediate(state.head) }
                    state.waiters[id] = Waiter(after: position, continuation: continuation)
                    let start = !state.isPolling
                    state.isPolling = true
                    return .waiting(startPoller: start)
                }
                switch registration {
                case let .immediate(head): continuation.resume(returning: head)
                case let .failure(error): continuation.resume(throwing: error)
                case let .waiting(startPoller): if startPoller { startPolling() }
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                state.cancelled.insert(id)
                return nil
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Ends every wait with ``EventStoreError/Code/closed``; later waits fail at once.
    package func close() {
        let waiters = state.withLock { state -> [Waiter] in
            state.isClosed = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: EventStoreError.closedStore) }
    }

    /// Polls while anyone waits; stops when nobody does (the next waiter starts it again).
    private func startPolling() {
        Task { [self] in
            while true {
                do {
                    try await clock.sleep(for: pollInterval)
                } catch {
                    // The clock refused to sleep: stop, and let the next waiter start a poller.
                    state.withLock { $0.isPolling = false }
                    return
                }
                let keepGoing = state.withLock { state -> Bool in
                    if state.waiters.isEmpty || state.isClosed {
                        state.isPolling = false
                        return false
                    }
                    return true
                }
                guard keepGoing else { return }
                do {
                    if let head = try await poll() { publish(head) }
                } catch {
                    // The waiters go on waiting for this process's commits; the next poll retries.
                    logger.info("polling for other processes' commits failed", metadata: [StoreLogKeys.reason: "\(error)"])
                }
            }
        }
    }
}
