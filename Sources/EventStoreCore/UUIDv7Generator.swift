import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes time-ordered UUIDs (RFC 9562 version 7): 48 bits of Unix milliseconds, then a 12-bit
/// counter that keeps ids made in the same millisecond increasing, then random bits.
///
/// Ordered ids land next to each other in the id index, so appends touch few index pages.
public final class UUIDv7Generator: Sendable {
    private struct State {
        var lastMillis: UInt64 = 0
        var counter: UInt16 = 0
        /// Random words not used yet, from the system's generator: taken a batch at a time, since
        /// one system call per id cost more than the rest of making it.
        var random: [UInt64] = []
    }

    /// How many random words one refill takes.
    private static let randomBatch = 256

    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    /// Creates a generator reading the given clock (the system clock by default).
    public init(clock: @escaping @Sendable () -> Date = { Date() }) {
        self.now = clock
    }

    /// Returns the next id; ids from one generator increase strictly.
    public func next() -> UUID {
        let wallMillis = UInt64(max(0, now().timeIntervalSince1970 * 1000))
        let (millis, counter, tail) = state.withLock { state -> (UInt64, UInt16, UInt64) in
            if wallMillis > state.lastMillis {
                state.lastMillis = wallMillis
                state.counter = 0
            } else if state.counter < 0x0FFF {
                state.counter += 1
            } else {
                // The counter ran out within one millisecond: borrow the next millisecond.
                state.lastMillis += 1
                state.counter = 0
            }
            if state.random.isEmpty { state.random = Self.randomWords(Self.randomBatch) }
            return (state.lastMillis, state.counter, state.random.removeLast())
        }
        return UUID(uuid: (
            UInt8(truncatingIfNeeded: millis >> 40), UInt8(truncatingIfNeeded: millis >> 32),
            UInt8(truncatingIfNeeded: millis >> 24), UInt8(truncatingIfNeeded: millis >> 16),
            UInt8(truncatingIfNeeded: millis >> 8), UInt8(truncatingIfNeeded: millis),
            0x70 | UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter),
            0x80 | UInt8(truncatingIfNeeded: tail >> 58), UInt8(truncatingIfNeeded: tail >> 48),
            UInt8(truncatingIfNeeded: tail >> 40), UInt8(truncatingIfNeeded: tail >> 32),
            UInt8(truncatingIfNeeded: tail >> 24), UInt8(truncatingIfNeeded: tail >> 16),
            UInt8(truncatingIfNeeded: tail >> 8), UInt8(truncatingIfNeeded: tail)
        ))
    }

    /// `count` words from the system's cryptographic generator: one read of `/dev/urandom`
    /// where it opens, else a word at a time from `SystemRandomNumberGenerator`.
    private static func randomWords(_ count: Int) -> [UInt64] {
        var words = [UInt64](repeating: 0, count: count)
        let filled = words.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            let device = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
            guard device >= 0 else { return false }
            defer { close(device) }
            var done = 0
            while done < buffer.count {
                let got = read(device, base + done, buffer.count - done)
                if got > 0 {
                    done += got
                } else if got == 0 || errno != EINTR {
                    return false
                }
            }
            return true
        }
        if !filled {
            var system = SystemRandomNumberGenerator()
            for index in words.indices { words[index] = system.next() }
        }
        return words
    }
}
