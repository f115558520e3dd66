import Foundation

/// Runs `body`, which blocks (waits for a child process, reads a pipe to its end), on a thread
/// of its own and returns what it returns or throws. A blocking call on a task would hold one of
/// the few threads of Swift's cooperative pool (one per core) for as long as it waits, and the
/// tasks queued behind it (lease renewals, timers, signal handling) would wait with it.
func onOwnThread<Value: Sendable>(named name: String, _ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}
