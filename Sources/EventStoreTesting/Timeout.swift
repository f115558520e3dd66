import EventStoreCore
import Foundation
import Synchronization

/// The error `withTimeout` throws: names what was awaited and for how long.
public struct TimeoutError: Error, CustomStringConvertible {
    /// What never arrived.
    public let what: String
    /// How long it was awaited.
    public let timeout: Duration

    public var description: String { "Timed out after \(timeout) waiting for \(what)." }
}

/// Runs `operation` and returns its result, or throws ``TimeoutError`` naming `what` when
/// `timeout` passes first. Whichever finishes first wins and the other is cancelled; the result
/// comes back at once even if the loser ignores cancellation. Cancelling the caller cancels the
/// operation and throws `CancellationError`.
public func withTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String, clock: any Clock<Duration> = ContinuousClock(),
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = Race<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation)
            let work = Task {
                do { race.finish(.success(try await operation())) } catch { race.finish(.failure(error)) }
            }
            let timer = Task {
                do {
                    try await clock.sleep(for: timeout)
                    race.finish(.failure(TimeoutError(what: what, timeout: timeout)))
                } catch {
                    // Cancelled: the work finished first or the caller gave up.
                }
            }
            race.setLosers([work, timer])
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The shared state of one `withTimeout` race: the first result resumes the caller, and every
/// task of the race is cancelled.
private final class Race<T: Sendable>: Sendable {
    private let first = FirstOutcome<T>()
    private let tasks = Mutex<[Task<Void, Never>]>([])

    func start(_ continuation: CheckedContinuation<T, any Error>) { first.wait(continuation) }

    func setLosers(_ losers: [Task<Void, Never>]) {
        tasks.withLock { $0 = losers }
        if first.isFinished { losers.forEach { $0.cancel() } }
    }

    func finish(_ result: Result<T, any Error>) {
        guard first.finish(result) else { return }
        tasks.withLock { $0 }.forEach { $0.cancel() }
    }
}
