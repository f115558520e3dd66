import EventStoreCore
import Foundation
import Synchronization

/// What one projection's lane did in a catch-up or rebuild.
struct LaneTotals: Sendable {
    var applied = 0
    var skipped = 0
    var time: Duration = .zero
    var head: UInt64 = 0
    var failure: ProjectionError?
}

/// The threads folds run on: the process's own (not Swift's cooperative pool, where a fold would
/// hold a thread that awaiting appends need, nor libdispatch's, whose threads serve others too),
/// at nice 10, so a rebuild takes the CPU the writer and the appending tasks leave, not theirs.
/// (A priority does not keep the appends' flushes quick on a machine whose cores are all busy: a
/// rebuild's pacing leaves a core idle while others write, ``RebuildPacing``.)
/// Started on first use, one per core (at least two); they wait for work when there is none.
///
/// A task executor: a fold is an async task that prefers it, so each of its steps runs here, and
/// while it awaits a round trip (PostgreSQL) it holds no thread. Two pools: serving states'
/// catch-ups fold on ``shared``, rebuilds on ``rebuilds``, whose threads a paced rebuild blocks
/// while it rests or waits for its turn (``RebuildPacing``): catch-ups never wait behind them.
final class FoldThreads: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs` is touched only under `condition`'s lock.
    static let shared = FoldThreads(count: max(2, ProcessInfo.processInfo.activeProcessorCount), name: "projections.fold")
    /// The threads of rebuilds' lanes.
    static let rebuilds = FoldThreads(count: max(2, ProcessInfo.processInfo.activeProcessorCount), name: "projections.rebuild")

    /// The pool a lane of `slot` folds on.
    static func pool(for slot: Slot) -> FoldThreads { slot == .rebuild ? rebuilds : shared }

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init(count: Int, name: String) {
        for _ in 0..<count {
            let thread = Thread { [self] in work() }
            thread.name = name
            thread.start()
        }
    }

    /// Runs `job` on one of the threads.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        #if os(Linux)
        // On Linux the nice value is the thread's own, and `who` 0 names the calling thread; a
        // failure leaves it as it was.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Whether a rebuild is running away from the head: ``limit`` batches in a row left it as far or
/// further behind than the batch before, or ``window`` batches in a row brought it no closer
/// than it had already come. Then a rebuild folding apart goes on in the store's tables (the head
/// runs away from it), and one paced folds on unpaced.
///
/// Why the second rule: under appends the lag is noisy, and a rebuild that loses ground on
/// average still gains now and then. Counted against the batch before alone, each such gain
/// started the count again, and a rebuild folding apart chased a head that never paused for as
/// long as the appends went on (a conformance test, the suite under load, 2026-12-07). Against its
/// closest approach, a rebuild either comes closer than ever within ``window`` batches or is
/// running away, so it ends. The window is wider than the first rule's count: leaving the scratch
/// tables early puts the rebuild's batches in the appends' commits, which S9 measures
/// (BENCHMARKS.md, "A rebuild that chased the head forever").
struct FallingBehind {
    static let limit = 8
    static let window = 32
    private var lag = UInt64.max
    /// The least lag a batch has left so far.
    private var closest = UInt64.max
    /// The batches in a row that left the rebuild as far or further behind than the batch before.
    private(set) var batches = 0
    /// The batches in a row that brought it no closer to the head than its closest approach.
    private(set) var sinceClosest = 0

    /// Counts `folded` and returns how far behind its snapshot's head it left the rebuild.
    @discardableResult
    mutating func record(_ folded: FoldedBatch) -> UInt64 { record(head: folded.head, reached: folded.next.position) }

    /// Counts a batch that left the rebuild at `reached` with the log's head at `head`, and
    /// returns how far behind it is.
    @discardableResult
    mutating func record(head: UInt64, reached: UInt64) -> UInt64 {
        let behind = head - min(head, reached)
        batches = behind >= lag ? batches + 1 : 0
        lag = behind
        if behind < closest {
            closest = behind
            sinceClosest = 0
        } else {
            sinceClosest += 1
        }
        return behind
    }

    /// Whether the rebuild is running away from the head (see the type's rules).
    var isRunningAway: Bool { batches >= Self.limit || sinceClosest >= Self.window }
}

/// One rebuild lane per store and projection at a time in this process: a second waits, in
/// order, until the first has ended (its rebuild swapped in, stopped or abandoned), and then
/// finds what it left.
enum RebuildLaneGate {
    /// For each key held, the lanes waiting for it.
    private static let held = Mutex<[String: [CheckedContinuation<Void, Never>]]>([:])

    /// Runs `body` holding `key`'s gate, waiting for it first if another lane holds it.
    static func holding<T>(_ key: String, _ body: () async throws -> T) async throws -> T {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let free = held.withLock { held -> Bool in
                guard held[key] != nil else {
                    held[key] = []
                    return true
                }
                held[key, default: []].append(waiter)
                return false
            }
            if free { waiter.resume() }
        }
        defer {
            let next = held.withLock { held -> CheckedContinuation<Void, Never>? in
                guard var waiters = held[key], !waiters.isEmpty else {
                    held[key] = nil
                    return nil
                }
                let first = waiters.removeFirst()
                held[key] = waiters
                return first
            }
            next?.resume()
        }
        return try await body()
    }
}

/// The positions lanes have reached, for one progress report over all of them: the lowest.
final class ProgressTally: Sendable {
    let names: [String]
    private let reached = Mutex<[String: UInt64]>([:])

    init(names: [String]) {
        self.names = names
    }

    /// Records a lane's position and returns the lowest of all lanes.
    func record(_ name: String, _ position: UInt64) -> UInt64 {
        reached.withLock { positions in
            positions[name] = position
            return names.map { positions[$0] ?? 0 }.min() ?? position
        }
    }
}

extension ProjectionRunner {
    /// Runs one lane per projection, at most ``parallelism`` at once, each in batches until its
    /// state reaches the head (for a rebuild: until it is swapped in). Lanes are independent: a
    /// slow or stopped projection holds back no other's checkpoint.
    func runLanes(_ lanes: [(projection: any Projection, slot: Slot)], timed: Bool, progress: Progress?) async throws -> [String: LaneTotals] {
        let tally = ProgressTally(names: lanes.map(\.projection.name))
        let report: (@Sendable (String, UInt64, UInt64) -> Void)?
        if let progress {
            report = { name, position, head in progress(tally.names, tally.record(name, position), head) }
        } else {
            report = nil
        }
        var totals: [String: LaneTotals] = [:]
        try await withThrowingTaskGroup(of: (String, LaneTotals).self) { group in
            var pending = lanes[...]
            var running = 0
            while running > 0 || !pending.isEmpty {
                while running < parallelism, let lane = pending.popFirst() {
                    running += 1
                    let projection = lane.projection
                    let slot = lane.slot
                    // The lane's own steps between its folds and writes run on the fold threads
                    // too: on Swift's cooperative pool they would wait behind every appending
                    // task at each step.
                    group.addTask(executorPreference: FoldThreads.pool(for: slot)) {
                        let lane = try await self.runLane(projection, slot, timed: timed, report: report)
                        return (projection.name, lane)
                    }
                }
                guard let finished = try await group.next() else { break }
                running -= 1
                totals[finished.0] = finished.1
            }
        }
        return totals
    }

    /// Folds and commits batches of one projection until its state reaches the head of its
    /// fold's snapshot (a rebuild: until the writer swaps it in), it stops, or no rebuild is
    /// left to do (another runner swapped it in).
    private func runLane(
        _ projection: any Projection, _ slot: Slot, timed: Bool, report: (@Sendable (String, UInt64, UInt64) -> Void)?
    ) async throws -> LaneTotals {
        guard slot == .rebuild else { return try await runSteps(projection, slot, timed: timed, report: report) }
        // One rebuild lane of a projection at a time in this process: a lane folding apart must
        // not have another fold its generation's rows while its copy is half written.
        return try await RebuildLaneGate.holding(store.location + "\u{0}" + projection.name) {
            try await emptyCutShortCopy(projection)
            return try await runSteps(projection, slot, timed: timed, report: report)
        }
    }

    /// A rebuild at position 0 whose generation holds rows (a copy from scratch tables cut short
    /// by a crash) is emptied first, a short transaction at a time, each checking that the
    /// rebuild is still where it was read: folding from 0 on those rows would keep them.
    private func emptyCutShortCopy(_ projection: any Projection) async throws {
        let name = projection.name
        guard let base = try await store.readTables({ txn in try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) }),
            base.position == 0
        else { return }
        let limit = maximumBatchRows
        while try await store.writeTables({ txn in
            guard try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) == base else { return true }
            return try await CatchUpBatch.clear(projection, generation: base.generation, limit: limit, txn)
        }) == false {}
    }

    /// The steps of one lane (see ``runLane``).
    private func runSteps(
        _ projection: any Projection, _ slot: Slot, timed: Bool, report: (@Sendable (String, UInt64, UInt64) -> Void)?
    ) async throws -> LaneTotals {
        var totals = LaneTotals()
        var othersWriting = false
        // A rebuild that falls behind the head batch after batch stops resting: paced, it would chase a
        // busy head forever (its last step comes only within `finalRebuildStep` of it).
        var fallingBehind = FallingBehind()
        if slot == .rebuild, let space = store as? any LogScratchTables {
            // Folded apart first, then copied in key order; nil: go on in the store's tables.
            if let finished = try await foldInScratch(projection, space, timed: timed, report: report, totals: &totals) { return finished }
        }
        while true {
            try Task.checkCancellation()
            // Counted from before the fold, not only over the write: a write taken at once, in
            // the moment between two group commits of appends, saw none complete, and the next
            // batch, as large as alone, then held every appender for one long commit.
            let writesBefore = store.writerStatistics.completedWrites
            let maximumRows = othersWriting ? maximumBatchRows : maximumBatchRowsAlone
            let paced = !fallingBehind.isRunningAway
            guard let folded = try await fold(projection, slot, maximumRows: maximumRows, timed: timed, paced: paced) else { return totals }
            totals.head = folded.head
            if slot == .rebuild && paced { fallingBehind.record(folded) }
            if let failure = folded.progress.failure {
                totals.failure = failure
                return totals
            }
            guard folded.needsCommit else { return totals }
            let finalStep = finalRebuildStep
            let outcome = try await store.writeTables { txn in
                try await CatchUpBatch.commit(txn, folded, projection: projection, finalStep: finalStep)
            }
            // More jobs completed while this batch was folded and written than this runner's
            // lanes make: appends (or other writers) are going on.
            othersWriting = store.writerStatistics.completedWrites - writesBefore > UInt64(parallelism)
            if outcome == .raced { continue }
            totals.applied += folded.progress.applied
            totals.skipped += folded.progress.skipped
            totals.time += folded.progress.time
            report?(projection.name, folded.next.position, folded.head)
            if case let .swapped(applied, skipped) = outcome {
                totals.applied += applied
                totals.skipped += skipped
                try await clear(projection, generation: 1 - folded.next.generation)
                return totals
            }
            if slot == .serving && folded.next.position >= folded.head { return totals }
        }
    }

    /// Empties the projection's tables in `generation`, which no checkpoint names, in short
    /// write transactions of at most ``maximumBatchRows`` deletions.
    func clear(_ projection: any Projection, generation: Int) async throws {
        let limit = maximumBatchRows
        while try await !store.writeTables({ txn in try await CatchUpBatch.clear(projection, generation: generation, limit: limit, txn) }) {}
    }

    /// One batch of `projection` folded in a read snapshot on the fold threads (its rows those of
    /// `scratch`, when given), a rebuild's paced by ``rebuildPacing`` unless `paced` is false.
    func fold(
        _ projection: any Projection, _ slot: Slot, maximumRows: Int, timed: Bool, scratch: (any ScratchTables)? = nil,
        paced: Bool = true
    ) async throws -> FoldedBatch? {
        let store = store
        let limit = batchSize
        // A rebuild's folds are paced while others write (unless it fell behind: `paced` false);
        // a serving state's catch-ups are not.
        let pacer = slot == .rebuild && paced ? rebuildPacer : nil
        return try await withTaskExecutorPreference(FoldThreads.pool(for: slot)) {
            try await store.readTables { txn in
                try await CatchUpBatch.fold(
                    txn, projection: projection, slot: slot, limit: limit, maximumRows: maximumRows, timed: timed, scratch: scratch,
                    pace: pacer?.lane())
            }
        }
    }
}
