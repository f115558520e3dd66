import EventStoreCore
import Foundation
import Synchronization

/// Runs a caller's async closure (a table write) on the writer thread, inside the writer's
/// transaction: a task executor whose jobs the writer thread itself runs while it waits for the
/// closure to finish.
///
/// An LMDB write transaction belongs to the thread that began it, and an async closure may
/// resume anywhere; so the closure runs as a task that prefers this executor, and every job of
/// it (its start, and each resumption after it awaits) comes back to the writer thread. The
/// table operations of LMDB never suspend, so a closure that awaits only them runs in one job.
///
/// `@unchecked Sendable`: `jobs` and `running` are touched only under `condition`'s lock.
final class WriterExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    /// Whether the writer thread is inside ``run(_:)``, running the jobs that come.
    private var running = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if running {
            jobs.append(job)
            condition.signal()
            condition.unlock()
            return
        }
        condition.unlock()
        // A job that comes when no closure runs (a task a closure left behind, which inherited
        // the preference) is not the writer's business: it runs elsewhere.
        DispatchQueue.global().async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Wakes the writer thread's wait in ``run(_:)`` (the closure has finished).
    private func wake() {
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` to its end, running its jobs on the calling thread (the writer's), and
    /// returns its outcome. Marks the task as inside a table closure (see ``TableClosure``), so
    /// that a call from it that would wait for the writer fails at once instead.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let outcome = Outcome<T>()
        condition.lock()
        running = true
        condition.unlock()
        Task(executorPreference: self) { [self] in
            let result: Result<T, any Error>
            do {
                result = .success(try await TableClosure.$isRunning.withValue(true) { try await body() })
            } catch {
                result = .failure(error)
            }
            outcome.value.withLock { $0 = result }
            wake()
        }
        while true {
            condition.lock()
            while jobs.isEmpty && outcome.value.withLock({ $0 == nil }) { condition.wait() }
            let ready = jobs
            jobs.removeAll()
            if ready.isEmpty, let result = outcome.value.withLock({ $0 }) {
                running = false
                condition.unlock()
                return result
            }
            condition.unlock()
            for job in ready { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

/// A closure's outcome, set by its task and read by the writer thread.
private final class Outcome<T: Sendable>: Sendable {
    let value = Mutex<Result<T, any Error>?>(nil)
}

/// A value of the writer's transaction handed to a closure that runs on the writer thread.
/// `@unchecked Sendable`: the closure runs as a task all of whose jobs the writer thread runs
/// (see ``WriterExecutor``), while the writer waits; no other thread ever touches the value.
struct WriterOwned<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
