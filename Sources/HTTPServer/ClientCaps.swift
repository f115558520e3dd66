import Logging
import Synchronization

/// A cap on something clients hold at once (live streams, waits for a projection): past it, a
/// request is refused with 503 and `Retry-After` (``ServerError/Code/unavailable``), and the
/// first refusal of each burst is logged at warning.
final class ClientCap: Sendable {
    /// The most held at once.
    let limit: Int
    /// What is held, in the plural ("live streams").
    private let what: String
    /// The option that sets the cap ("--max-subscribers").
    private let option: String
    private let logger: Logger
    fileprivate let state = Mutex<(held: Int, refusing: Bool)>((0, false))

    init(limit: Int, what: String, option: String, logger: Logger) {
        self.limit = limit
        self.what = what
        self.option = option
        self.logger = logger
    }

    /// How many are held now (by ``hold(_:)`` and ``reserve()``).
    var held: Int { state.withLock { $0.held } }

    /// Runs `body` holding one place under the cap, given back however `body` ends. Throws
    /// ``ServerError`` with ``ServerError/Code/unavailable`` when the cap is reached.
    func hold<T>(_ body: () async throws -> T) async throws -> T {
        try admit()
        defer { state.withLock { $0.held -= 1 } }
        return try await body()
    }

    /// Takes one place under the cap for something that outlives the route's handler (a live
    /// stream's body): the place is given back by ``Slot/release()``, or when the slot is freed
    /// (a response whose body never ran). Throws ``ServerError`` with
    /// ``ServerError/Code/unavailable`` when the cap is reached.
    func reserve() throws(ServerError) -> Slot {
        try admit()
        return Slot(cap: self)
    }

    /// One place held under a ``ClientCap``.
    final class Slot: Sendable {
        private let cap: ClientCap
        private let held = Atomic<Bool>(true)

        fileprivate init(cap: ClientCap) {
            self.cap = cap
        }

        /// Gives the place back (once; later calls do nothing).
        func release() {
            if held.exchange(false, ordering: .relaxed) { cap.state.withLock { $0.held -= 1 } }
        }

        deinit { release() }
    }

    /// Counts one more or refuses.
    private func admit() throws(ServerError) {
        let (admitted, firstRefusal) = state.withLock { state -> (Bool, Bool) in
            guard state.held < limit else {
                defer { state.refusing = true }
                return (false, !state.refusing)
            }
            state.held += 1
            state.refusing = false
            return (true, false)
        }
        guard admitted else {
            if firstRefusal {
                logger.warning(
                    "refusing requests with 503: \(limit) \(what) are open, the cap (\(option))",
                    metadata: ["limit": "\(limit)"])
            }
            throw ServerError(.unavailable, "The server has as many \(what) open as it serves at once (\(option)); try again shortly.")
        }
    }
}
