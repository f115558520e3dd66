import Synchronization

/// The last committed position this process knows of, moved by the writer after each commit.
final class HeadSignal: Sendable {
    private let head: Atomic<UInt64>

    init(head: UInt64) {
        self.head = Atomic(head)
    }

    /// The newest head published.
    var current: UInt64 { head.load(ordering: .acquiring) }

    /// Publishes a new head (only ever larger).
    func publish(_ newHead: UInt64) {
        head.store(newHead, ordering: .releasing)
    }
}
