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
    private let state = Mutex<(held: Int, refusing: Bool)>((0, false))

    init(limit: Int, what: String, option: String, logger: Logger) {
        self.limit = limit
        self.what = what
        self.option = option
        self.logger = logger
    }

    /// How many are held now (counted by ``hold(_:)``).
    var held: Int { state.withLock { $0.held } }

    /// Runs `body` holding one place under the cap, given back however `body` ends. Throws
    /// ``ServerError`` with ``ServerError/Code/unavailable`` when the cap is reached.
    func hold<T>(_ body: () async throws -> T) async throws -> T {
        try admit(held: nil)
        defer { state.withLock { $0.held -= 1 } }
        return try await body()
    }

    /// Refuses when `count` (held elsewhere, as ``OpenStreams`` counts live streams) has reached
    /// the cap. Throws ``ServerError`` with ``ServerError/Code/unavailable``.
    func check(count: Int) throws(ServerError) {
        try admit(held: count)
    }

    /// Admits one more (counting it here when `held` is nil) or refuses.
    private func admit(held counted: Int?) throws(ServerError) {
        let (admitted, firstRefusal) = state.withLock { state -> (Bool, Bool) in
            let current = counted ?? state.held
            guard current < limit else {
                defer { state.refusing = true }
                return (false, !state.refusing)
            }
            if counted == nil { state.held += 1 }
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
