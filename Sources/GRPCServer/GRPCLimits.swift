import EventStoreCore
import Synchronization

/// The bounds of the gRPC face: batch sizes, the size of a response message, and how many
/// subscriptions it follows at once.
public struct GRPCLimits: Sendable {
    /// The batch size of a read or subscription that gives none (UmaDB's).
    public static let defaultBatchSize = 1024
    /// The largest batch a call may ask for (UmaDB's; larger asks are cut to it).
    public static let maximumBatchSize = 4096
    /// The size a response message stays under (about UmaDB 0.7.8's), below the 4 MiB a gRPC
    /// client takes by default.
    public var responseChunkBytes = 3_500_000
    /// The subscriptions followed at once; past it, Subscribe answers RESOURCE_EXHAUSTED.
    let subscriptions: Slots

    /// Limits with room for `maxSubscribers` subscriptions at once.
    public init(maxSubscribers: Int = 256) {
        subscriptions = Slots(capacity: max(1, maxSubscribers))
    }

    /// A call's batches: up to `maximum` events, and about ``responseChunkBytes`` at most.
    func batchSizer(upTo maximum: Int) -> BatchSizer {
        BatchSizer(maximum: maximum, budgetBytes: responseChunkBytes)
    }

    /// A call's batch size: the default when absent, else between 1 and the maximum.
    func batchSize(_ asked: UInt32?) -> Int {
        guard let asked else { return Self.defaultBatchSize }
        return min(max(Int(asked), 1), Self.maximumBatchSize)
    }
}

/// How many events a call reads at once: few at first, then as many as keep a batch near its
/// byte budget given the sizes seen so far, up to the batch size asked. So a reader (or a
/// subscriber that stops reading) holds about one budget of events, not 4,096 events of
/// whatever size.
struct BatchSizer {
    let maximum: Int
    let budgetBytes: Int
    /// The events to ask for next.
    private(set) var current: Int

    init(maximum: Int, budgetBytes: Int) {
        self.maximum = max(1, maximum)
        self.budgetBytes = budgetBytes
        current = min(self.maximum, 16)
    }

    /// Adapts to the sizes of a batch just read: up to four times larger, or smaller when its
    /// events were big.
    /// `count` events of about `bytes` bytes in all.
    mutating func observe(count: Int, bytes: Int) {
        guard count > 0 else { return }
        let average = max(1, bytes / count)
        current = max(1, min(maximum, current &* 4, budgetBytes / average))
    }
}

/// A count of slots taken, up to a capacity.
final class Slots: Sendable {
    let capacity: Int
    private let taken = Mutex(0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// A slot, or nil when all are taken; release it once.
    func acquire() -> Lease? {
        let ok = taken.withLock { count in
            guard count < capacity else { return false }
            count += 1
            return true
        }
        return ok ? Lease(slots: self) : nil
    }

    fileprivate func release() {
        taken.withLock { $0 -= 1 }
    }

    /// One slot taken.
    struct Lease: Sendable {
        fileprivate let slots: Slots

        func release() { slots.release() }
    }
}
