import Synchronization

/// Slows the guessing of a token: an address that presented ``allowedFailures`` wrong tokens
/// (a missing token, or a stale session cookie, is not a guess) within ``window`` is answered 429 (``ServerError/Code/tooManyRequests``) without any
/// check until that window ends, so a client learns at most that many guesses a minute. Keyed by
/// the client's IP address (not its port); at most ``maximumAddresses`` are remembered, the
/// oldest forgotten first, so a flood of addresses costs bounded memory.
final class TokenThrottle: Sendable {
    /// Wrong tokens an address may send within a window before it is refused.
    static let allowedFailures = 10
    /// The window failures are counted in.
    static let window = Duration.seconds(60)
    /// Addresses remembered at most.
    static let maximumAddresses = 4096

    private struct Entry {
        var failures: Int
        let windowStart: ContinuousClock.Instant
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let now: @Sendable () -> ContinuousClock.Instant

    /// A throttle on `now`'s clock (the continuous clock by default).
    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.now = now
    }

    /// Throws ``ServerError`` with ``ServerError/Code/tooManyRequests`` when `address` has used
    /// up its failures in the current window.
    func check(_ address: String?) throws(ServerError) {
        guard let address else { return }
        let instant = now()
        let refused = entries.withLock { entries -> Bool in
            guard let entry = entries[address] else { return false }
            if instant - entry.windowStart >= Self.window {
                entries[address] = nil
                return false
            }
            return entry.failures >= Self.allowedFailures
        }
        if refused {
            throw ServerError(
                .tooManyRequests,
                "Too many requests with a wrong token came from this address; wait a minute (Retry-After), then send the right token.")
        }
    }

    /// Counts one wrong token presented from `address`.
    func failed(_ address: String?) {
        guard let address else { return }
        let instant = now()
        entries.withLock { entries in
            if var entry = entries[address], instant - entry.windowStart < Self.window {
                entry.failures += 1
                entries[address] = entry
                return
            }
            if entries[address] == nil && entries.count >= Self.maximumAddresses {
                // Forget the windows that ended; if none has, the oldest.
                entries = entries.filter { instant - $0.value.windowStart < Self.window }
                if entries.count >= Self.maximumAddresses,
                    let oldest = entries.min(by: { $0.value.windowStart < $1.value.windowStart })?.key
                {
                    entries[oldest] = nil
                }
            }
            entries[address] = Entry(failures: 1, windowStart: instant)
        }
    }
}
