import EventStoreCore
import Logging
import PostgresNIO
import Synchronization

/// One LISTEN connection per store: turns the append function's notifications into the same
/// "head moved" signal the LMDB writer gives. Notifications are hints; the table is the truth:
/// the head published is always one read from the head row.
/// When the connection drops, ``isListening`` turns false (waiting subscriptions then poll the
/// head row) and the listener connects again after a pause on the injected clock.
///
/// It starts when someone first waits for the head (a subscription, `waitForCommit`), not when
/// the store opens: a short command that never waits never holds the connection. The connection
/// is its own, outside the pool (``OwnConnection``): held for as long as the handle listens, it
/// would take one of the pool's for good, and its lease would race the subscriber's reads, so
/// that the pool opened a connection more under load.
final class HeadListener: Sendable {
    private let pool: PoolSwitch
    private let logger: Logger
    private let listening = Atomic<Bool>(false)
    /// Where and how it listens, once ``configure(publishingTo:retryEvery:on:)`` said so; the
    /// task once started; whether ``stop()`` was called.
    private struct State {
        var signal: HeadSignal?
        var pause: Duration = .seconds(1)
        var clock: (any Clock<Duration>)?
        var task: Task<Void, Never>?
        var isStopped = false
    }
    private let state = Mutex(State())

    /// A listener that connects to the server `pool` uses (after a failover, the new one).
    init(pool: PoolSwitch, logger: Logger) {
        self.pool = pool
        self.logger = logger
    }

    /// Whether notifications are arriving: false before the first LISTEN and after a drop.
    var isListening: Bool { listening.load(ordering: .acquiring) }

    /// Says where to publish the heads notified, and how long to pause before connecting again.
    func configure(publishingTo signal: HeadSignal, retryEvery pause: Duration, on clock: any Clock<Duration>) {
        state.withLock { state in
            state.signal = signal
            state.pause = pause
            state.clock = clock
        }
    }

    /// Starts listening, once (later calls do nothing, and none after ``stop()``).
    func startIfNeeded() {
        state.withLock { state in
            guard state.task == nil, !state.isStopped, let signal = state.signal, let clock = state.clock else { return }
            let pause = state.pause
            state.task = Task { [self] in await run(publishingTo: signal, retryEvery: pause, on: clock) }
        }
    }

    /// Stops listening for good; returns the listening task, if one started, to be awaited.
    @discardableResult
    func stop() -> Task<Void, Never>? {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.isStopped = true
            return state.task
        }
        task?.cancel()
        return task
    }

    /// Listens until the task is cancelled, publishing every notified head on `signal`.
    private func run(publishingTo signal: HeadSignal, retryEvery pause: Duration, on clock: any Clock<Duration>) async {
        // Said once per outage (at notice), not at every try to connect again.
        var dropped = false
        while !Task.isCancelled {
            do {
                let location = pool.currentLocation
                let connection = try await OwnConnection.connectUnlessCancelled(location, as: .listen, logger: logger, on: clock)
                if dropped {
                    logger.notice("the connection that listens for appends is back", metadata: ["server": "\(location)"])
                    dropped = false
                }
                do {
                    // Cancelling ends the notifications (the sequence finishes when its task is
                    // cancelled); the connection is closed here, after, never under a head read
                    // still running on it: a query sent on a connection closed meanwhile may
                    // never be answered, and the handle's close would wait for it for good.
                    try await listen(on: connection, publishingTo: signal)
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled { break }
                logger.log(
                    level: dropped ? .debug : .notice, "the connection that listens for appends dropped; polling until it is back",
                    metadata: ["reason": "\(error)"])
                dropped = true
                pool.connectionDropped(reason: "the listening connection dropped: \(error)")
            }
            listening.store(false, ordering: .releasing)
            do {
                try await clock.sleep(for: max(pause, .milliseconds(100)))
            } catch {
                break
            }
        }
        listening.store(false, ordering: .releasing)
    }

    /// LISTENs on `connection`, reads the head once (commits between the last look and LISTEN),
    /// then reads and publishes it again on every notification that may move it, until the
    /// notifications end.
    ///
    /// A notification is a wake-up, never a head: any role that may connect may NOTIFY this
    /// channel with any payload, and a forged head, once published, would hold every waiter's
    /// `.end` past the real one for good. A notification that names a head at or below the last
    /// one read is skipped (which folds a burst of commits into few reads), and so is one that is
    /// not a number.
    private func listen(on connection: PostgresConnection, publishingTo signal: HeadSignal) async throws {
        try await connection.listen(on: PostgresSchema.channel) { notifications in
            var known = try await PostgresEventStore.readHead(connection, logger: logger)
            signal.publish(known)
            listening.store(true, ordering: .releasing)
            for try await notification in notifications {
                // The append function sends the head it wrote; other payloads are not ours.
                guard let notified = UInt64(notification.payload), notified > known else { continue }
                known = try await PostgresEventStore.readHead(connection, logger: logger)
                signal.publish(known)
            }
        }
    }
}
