@_spi(Records) import EventStoreCore
import CLMDB
import Foundation
import Logging
import Synchronization

/// What a job may throw from inside the batch transaction.
enum JobFailure: Error {
    /// The job failed its checks before writing anything: it fails alone, the batch goes on.
    case rejected(EventStoreError)
    /// The job failed after writing: the transaction is aborted and retried without it.
    case poisoned(EventStoreError)
    /// The transaction itself failed (map full, too many dirty pages, an LMDB error).
    case transaction(EventStoreError)
}

/// The state shared by the jobs of one batch transaction.
struct BatchContext {
    let txn: Transaction
    let databases: Databases
    /// The position the next appended event takes.
    var nextPosition: UInt64
    /// The time stamped on every event of this batch, in microseconds since 1970.
    let recordedAt: Int64
    /// Where a job runs a caller's async closure, on this thread (see ``WriterExecutor``).
    let executor: WriterExecutor
}

/// One unit of work for the writer thread, run inside a transaction it shares with other jobs.
///
/// A job is handed to the writer once and from then on touched only by the writer thread, until
/// `complete` or `fail` hands its result back to the waiting caller.
protocol WriteJob: AnyObject {
    /// How many events the job appends (for sizing batches).
    var eventCount: Int { get }
    /// Does the job's work in the batch transaction. May be called again on a retry of the batch;
    /// each call starts from scratch.
    func run(in context: inout BatchContext) throws(JobFailure)
    /// The batch committed: deliver the result of the last `run`.
    func complete()
    /// The job failed: deliver the error.
    func fail(_ error: EventStoreError)
    /// Whether the batch must read the store's clock for this job (true unless it says not).
    var readsClock: Bool { get }
}

extension WriteJob {
    var readsClock: Bool { true }
}

/// The one thread that runs every write transaction of a store.
///
/// An LMDB write transaction belongs to the thread that began it, and Swift tasks hop threads, so
/// callers hand jobs to this thread and await the outcome. The thread drains every queued job into
/// one transaction and commits once (group commit): one sync serves many callers.
///
/// `@unchecked Sendable`: the queue and the state are guarded by `condition`; everything else is
/// immutable or touched only by the writer thread.
final class Writer: @unchecked Sendable {
    private enum State { case running, closing, closed }

    private let environment: Environment
    private let clock: @Sendable () -> Date
    private let maximumEventsPerCommit: Int
    private let staleReaderCheckInterval: Duration
    private let slowCommitThreshold: Duration
    private let logger: Logger
    private let metrics: StoreMetrics
    private let condition = NSCondition()
    private var queue: [any WriteJob] = []
    private var state = State.running
    private let stopped = DispatchSemaphore(value: 0)
    /// The writer thread; set once in `init`, before anyone else can see the writer.
    private var thread: Thread?
    /// Told the new head after each commit that appended events.
    private let headSignal: HeadSignal
    /// Runs callers' async table closures on this thread.
    private let executor = WriterExecutor()

    /// Write transactions committed since the store opened.
    let commitCount = Atomic<UInt64>(0)
    /// Jobs completed successfully since the store opened.
    let completedJobCount = Atomic<UInt64>(0)

    /// Whether the store's `meta` still says an older format: the first commit marks it current,
    /// since the records it writes are of the current format. Touched only by the writer thread.
    private var formatUpgradePending: Bool

    /// Starts the writer thread, unless the environment is read-only: then every submission is
    /// refused.
    init(
        environment: Environment, clock: @escaping @Sendable () -> Date, maximumEventsPerCommit: Int,
        staleReaderCheckInterval: Duration = .seconds(5), slowCommitThreshold: Duration = .seconds(1), logger: Logger,
        metrics: StoreMetrics, headSignal: HeadSignal
    ) {
        self.logger = logger
        self.metrics = metrics
        self.slowCommitThreshold = slowCommitThreshold
        self.environment = environment
        self.clock = clock
        self.staleReaderCheckInterval = staleReaderCheckInterval
        self.maximumEventsPerCommit = max(1, maximumEventsPerCommit)
        self.headSignal = headSignal
        self.formatUpgradePending = environment.storedFormat < Schema.formatVersion
        if environment.isReadOnly {
            state = .closed
            return
        }
        let thread = Thread { [self] in self.loop() }
        thread.name = Self.threadName
        self.thread = thread
        thread.start()
    }

    /// Queues a job; throws ``EventStoreError/Code/closed`` once the writer is shutting down, and
    /// ``EventStoreError/Code/storeUnavailable`` when the store is open read-only.
    func submit(_ job: any WriteJob) throws(EventStoreError) {
        // From a table closure the writer runs, the job would wait for the writer forever.
        try TableClosure.checkOutside("a write")
        if environment.isReadOnly {
            throw EventStoreError(
                .storeUnavailable,
                "The store at '\(environment.directory.path)' is open read-only; open it for writing to change it.")
        }
        condition.lock()
        defer { condition.unlock() }
        guard state == .running else { throw EventStoreError.closedStore }
        queue.append(job)
        condition.signal()
    }

    /// The number of jobs waiting for the writer (for tests that need a queue to fill up).
    var queuedJobCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    /// Finishes every queued job, then stops the thread. Blocks until it has stopped, except on
    /// the writer thread itself (a store released by a job's closure closes there), where
    /// waiting would be waiting for itself: the thread stops when it returns to its loop.
    /// Idempotent.
    /// Whether the calling thread is the writer thread.
    var isWriterThread: Bool { thread != nil && Thread.current == thread }

    func shutDown() {
        condition.lock()
        let wasRunning = state == .running
        if wasRunning {
            state = .closing
            condition.signal()
        }
        condition.unlock()
        if wasRunning && Thread.current != thread { stopped.wait() }
    }

    private static let threadName = "EventStore.writer"

    private func loop() {
        while let batch = nextBatch() {
            commit(batch)
        }
        stopped.signal()
    }

    /// Waits for work and takes as many queued jobs as fit in one transaction; nil when closing
    /// and nothing is left.
    private func nextBatch() -> [any WriteJob]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty {
            if state != .running {
                state = .closed
                return nil
            }
            condition.wait()
        }
        var taken = 0
        var events = 0
        for job in queue {
            if taken > 0 && events + job.eventCount > maximumEventsPerCommit { break }
            taken += 1
            events += job.eventCount
        }
        let batch = Array(queue.prefix(taken))
        queue.removeFirst(taken)
        return batch
    }

    /// A duration in seconds, for the log.
    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Runs `jobs` in one transaction and commits, retrying as the failures require.
    private func commit(_ jobs: [any WriteJob]) {
        if let gone = environment.dataFile?.check() {
            if !reportedDataFileGone {
                reportedDataFileGone = true
                logger.error("refusing writes: the data file was deleted or replaced while open", metadata: [StoreLogKeys.reason: "\(gone.message)"])
            }
            jobs.forEach { $0.fail(gone) }
            return
        }
        var pending = jobs
        while !pending.isEmpty {
            var rejected: [(Int, EventStoreError)] = []
            var poisoned: (Int, EventStoreError)?
            var transactionError: EventStoreError?
            // A batch of only jobs that never record an event (a subject's new key, made before
            // the append that uses it) leaves the clock alone: a test's stepping clock too.
            let recordedAt = pending.contains { $0.readsClock } ? Self.microseconds(clock()) : 0
            let started = ContinuousClock.now
            // When the jobs had run: the rest of a slow commit's time is LMDB's commit (the flush).
            var ran = started
            do throws(EventStoreError) {
                let (head, written) = try environment.transaction(readOnly: false) {
                    txn -> (UInt64, UInt64) in
                    var context = BatchContext(
                        txn: txn, databases: environment.databases,
                        nextPosition: try Self.lastPosition(txn, environment.databases) + 1,
                        recordedAt: recordedAt, executor: executor)
                    let start = context.nextPosition
                    // The store may now hold records of the current format.
                    if formatUpgradePending { try MetaCounters.markFormat(Schema.formatVersion, txn, environment.databases) }
                    for (index, job) in pending.enumerated() {
                        do throws(JobFailure) {
                            try job.run(in: &context)
                        } catch {
                            switch error {
                            case let .rejected(reason):
                                rejected.append((index, reason))
                            case let .poisoned(reason):
                                poisoned = (index, reason)
                                throw reason
                            case let .transaction(reason):
                                transactionError = reason
                                throw reason
                            }
                        }
                    }
                    ran = ContinuousClock.now
                    return (context.nextPosition - 1, context.nextPosition - start)
                }
                commitCount.add(1, ordering: .relaxed)
                let elapsed = ContinuousClock.now - started
                if elapsed > slowCommitThreshold {
                    logger.warning(
                        "a commit was slow",
                        metadata: [
                            StoreLogKeys.seconds: "\(Self.seconds(elapsed))", StoreLogKeys.runningSeconds: "\(Self.seconds(ran - started))",
                            StoreLogKeys.jobs: "\(pending.count)", StoreLogKeys.events: "\(pending.reduce(0) { $0 + $1.eventCount })",
                        ])
                }
                formatUpgradePending = false
                let rejectedIndices = Set(rejected.map(\.0))
                // Counted before anyone is told: a caller whose append returned finds it in the
                // metrics (a test read them between the commit and the count).
                // Table writes (projections' checkpoints and rows) are commits but not appends.
                let appends = pending.indices.filter { !rejectedIndices.contains($0) && pending[$0].eventCount > 0 }.count
                metrics.committed(appends: appends, events: Int(written), duration: elapsed)
                completedJobCount.add(UInt64(pending.count - rejected.count), ordering: .relaxed)
                // The head moves before anyone is told, too: a caller whose append returned
                // finds the signal at least there.
                if written > 0 { headSignal.publish(head) }
                for (index, reason) in rejected { pending[index].fail(reason) }
                for (index, job) in pending.enumerated() where !rejectedIndices.contains(index) {
                    job.complete()
                }
                releaseMappedPages()
                clearStaleReadersNowAndThen()
                return
            } catch {
                if let (index, reason) = poisoned {
                    pending.remove(at: index).fail(reason)
                    continue
                }
                let failure = transactionError ?? error
                switch failure.lmdbCode {
                case MDB_MAP_FULL?:
                    do throws(EventStoreError) {
                        let size = try environment.growMap()
                        logger.info("the store's map grew", metadata: [StoreLogKeys.path: "\(environment.directory.path)", StoreLogKeys.mapSize: "\(size)"])
                    } catch {
                        logger.info("the store's map could not grow", metadata: [StoreLogKeys.reason: "\(error)"])
                        pending.forEach { $0.fail(error) }
                        return
                    }
                case MDB_TXN_FULL? where pending.count > 1:
                    // Too many dirty pages for one transaction: give each job its own.
                    logger.info("a group commit was too large for one transaction; committing its jobs one by one", metadata: [StoreLogKeys.jobs: "\(pending.count)"])
                    for job in pending { commit([job]) }
                    return
                case MDB_TXN_FULL?:
                    pending[0].fail(
                        EventStoreError(
                            .invalidInput, "The append is too large for one transaction; split it into smaller appends.",
                            cause: failure.cause))
                    return
                default:
                    pending.forEach { $0.fail(failure) }
                    return
                }
            }
        }
    }

    /// At most every 100 ms, after a commit, tells the kernel this process no longer needs the
    /// map's pages in its page tables. LMDB writes through the file, never the map, so the pages
    /// stay in the page cache and reads fault them back in; the process's resident size then
    /// follows what it read lately, not everything it ever touched (a long append or rebuild
    /// would otherwise count the whole log as resident). A time limit, not a count, so many small
    /// commits do not pay for it each time.
    private func releaseMappedPages() {
        let now = ContinuousClock.now
        guard now - lastRelease >= .milliseconds(100) else { return }
        lastRelease = now
        environment.releaseMappedPages()
    }

    /// Touched only by the writer thread.
    private var lastRelease = ContinuousClock.now

    /// Whether the refusal for a deleted or replaced data file was logged. Writer thread only.
    private var reportedDataFileGone = false

    /// At most every `staleReaderCheckInterval`, after a commit: a reader killed during a long
    /// write (an import) keeps its slot, and the pages its snapshot may see, until someone clears
    /// it; the file grows meanwhile.
    private func clearStaleReadersNowAndThen() {
        let now = ContinuousClock.now
        guard now - lastReaderCheck >= staleReaderCheckInterval else { return }
        lastReaderCheck = now
        // A failure here changes nothing for the commit that just succeeded; the next check retries.
        do {
            let cleared = try environment.clearStaleReaders()
            if cleared > 0 { logger.info("cleared the reader slots of dead processes", metadata: [StoreLogKeys.readers: "\(cleared)"]) }
        } catch {
            logger.info("checking for dead readers failed", metadata: [StoreLogKeys.reason: "\(error)"])
        }
    }

    /// Touched only by the writer thread.
    private var lastReaderCheck = ContinuousClock.now

    /// The position of the last event in the log, 0 when it is empty.
    static func lastPosition(_ txn: Transaction, _ databases: Databases) throws(EventStoreError) -> UInt64 {
        let cursor = try txn.cursor(databases.events)
        guard let (key, _) = try cursor.last() else { return 0 }
        guard key.count == 8 else {
            throw EventStoreError(.damaged, "The log holds a key that is not a position; run `esctl verify`.")
        }
        return BigEndian.uint64(key)
    }

    static func microseconds(_ date: Date) -> Int64 { date.microsecondsSince1970 }
}
