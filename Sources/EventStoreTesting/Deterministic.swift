import Foundation
import Synchronization

/// An id generator for tests: 00000000-0000-0000-0000-000000000001, ...002, ... in order.
public final class SequentialIDs: Sendable {
    private let counter: Atomic<UInt64>

    /// Starts after `start` (the first id is `start + 1`).
    public init(start: UInt64 = 0) {
        counter = Atomic(start)
    }

    /// The next id.
    public func next() -> UUID {
        Self.id(counter.add(1, ordering: .relaxed).newValue)
    }

    /// The id made for the number `n`.
    public static func id(_ n: UInt64) -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: n.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: bytes)
    }
}

/// A clock for the store's timestamps that starts at a fixed instant and moves forward by `step`
/// each time it is read, so every recorded time is known in advance.
public final class SteppingClock: Sendable {
    private let start: Date
    private let step: TimeInterval
    private let reads = Atomic<Int>(0)

    /// Starts at `start` (2026-01-01T00:00:00Z by default) and steps by `step` seconds per read.
    public init(start: Date = Date(timeIntervalSince1970: 1_767_225_600), step: TimeInterval = 1) {
        self.start = start
        self.step = step
    }

    /// The next instant.
    public func now() -> Date {
        let n = reads.add(1, ordering: .relaxed).oldValue
        return start.addingTimeInterval(Double(n) * step)
    }

    /// How many times the clock was read.
    public var readCount: Int { reads.load(ordering: .relaxed) }
}
