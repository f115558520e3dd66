import EventStoreTesting

/// Waits until `condition` holds, polling every 20 ms, for at most `timeout`; throws an
/// ``AwaitFailure`` naming `what` otherwise. For conditions nothing signals, such as a log line
/// written just after the state a test awaited.
public func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while !condition() {
        if ContinuousClock.now >= deadline { throw AwaitFailure(description: "Timed out after \(timeout) waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
