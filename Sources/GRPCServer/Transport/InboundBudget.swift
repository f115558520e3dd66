import Synchronization

/// The bytes of unfinished request messages every connection of a transport holds at once,
/// against a capacity: a client that opens many streams and leaves each inside a large message
/// costs the server at most this much, not its windows times its streams.
final class InboundBudget: Sendable {
    let capacity: Int
    private let used = Atomic<Int>(0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Adds `delta` bytes (negative: gives them back); answers whether the total is within the
    /// capacity afterwards.
    func add(_ delta: Int) -> Bool {
        used.wrappingAdd(delta, ordering: .relaxed).newValue <= capacity
    }

    /// The bytes held now.
    var held: Int { used.load(ordering: .relaxed) }
}
