import Foundation

/// A gate that starts shut and, once opened, stays open: threads that wait on it block until
/// then. Used for the calls of `close()` that come while the first one runs.
final class Latch: @unchecked Sendable {
    // @unchecked Sendable: `isOpen` is touched only under `condition`'s lock.
    private let condition = NSCondition()
    private var isOpen = false

    /// Opens the gate and wakes every waiter.
    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks the calling thread until the gate is open.
    func wait() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }
}
