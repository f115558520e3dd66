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

    /// Decides a request from `address` that presented a token (`guessed`) or not, which proved
    /// `right` or not: throws ``ServerError`` with ``ServerError/Code/tooManyRequests`` when the
    /// address has used up its failures in the current window (right or not: a guess that comes
    /// after them is not even looked at), and counts a wrong guess otherwise. The check and the
    /// count are one step, so concurrent guesses cannot all pass a check made before any of them
    /// was counted.
    func admit(_ address: String?, guessed: Bool, right: Bool) throws(ServerError) {
        guard let address else { return }
        let instant = now()
        let refused = entries.withLock { entries -> Bool in
            if let entry = entries[address], instant - entry.windowStart >= Self.window {
                entries[address] = nil
            }
            if let entry = entries[address], entry.failures >= Self.allowedFailures { return true }
            if guessed && !right { Self.countFailure(of: address, at: instant, in: &entries) }
            return false
        }
        if refused {
            throw ServerError(
                .tooManyRequests,
                "Too many requests with a wrong token came from this address; wait a minute (Retry-After), then send the right token.")
        }
    }

    /// Counts one wrong token presented from `address` at `instant`.
    private static func countFailure(of address: String, at instant: ContinuousClock.Instant, in entries: inout [String: Entry]) {
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
