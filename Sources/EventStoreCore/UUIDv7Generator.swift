import Foundation
import Synchronization

/// Makes time-ordered UUIDs (RFC 9562 version 7): 48 bits of Unix milliseconds, then a 12-bit
/// counter that keeps ids made in the same millisecond increasing, then random bits.
///
/// Ordered ids land next to each other in the id index, so appends touch few index pages.
public final class UUIDv7Generator: Sendable {
    private struct State {
        var lastMillis: UInt64 = 0
        var counter: UInt16 = 0
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    /// Creates a generator reading the given clock (the system clock by default).
    public init(clock: @escaping @Sendable () -> Date = { Date() }) {
        self.now = clock
    }

    /// Returns the next id; ids from one generator increase strictly.
    public func next() -> UUID {
        let wallMillis = UInt64(max(0, now().timeIntervalSince1970 * 1000))
        let (millis, counter) = state.withLock { state -> (UInt64, UInt16) in
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
            return (state.lastMillis, state.counter)
        }
        var random = SystemRandomNumberGenerator()
        let tail = random.next() as UInt64
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
}
