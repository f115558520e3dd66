import EventStore
import Foundation
import Synchronization

/// What one projection's lane did in a catch-up or rebuild.
struct LaneTotals: Sendable {
    var applied = 0
    var skipped = 0
    var time: Duration = .zero
    var checkpoint: UInt64 = 0
    var head: UInt64 = 0
    var failure: ProjectionError?
}

/// The threads folds run on yield to everything else: a rebuild takes the CPU the writer and
/// the appending tasks leave, not theirs.
enum FoldThread {
    /// Lowers the calling thread's scheduling priority to nice 10 (on Linux the nice value is
    /// the thread's own, and `who` 0 names the calling thread); a failure leaves it as it was.
    /// A system call per batch: nothing next to the batch's fold.
    static func lowerPriority() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
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
    /// Where folds run: threads of their own, not Swift's cooperative pool (a fold holds its
    /// thread for a batch, and appends awaiting the writer must not wait behind it), at a lower
    /// priority than the writer.
    static let foldQueue = DispatchQueue(label: "projections.fold", qos: .utility, attributes: .concurrent)

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
                    group.addTask {
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
        var totals = LaneTotals()
        var othersWriting = false
        while true {
            try Task.checkCancellation()
            let maximumRows = othersWriting ? maximumBatchRows : maximumBatchRows.multipliedReportingOverflow(by: 16).partialValue
            guard let folded = try await fold(projection, slot, maximumRows: maximumRows, timed: timed) else { return totals }
            totals.head = folded.head
            totals.checkpoint = folded.progress.checkpoint
            if let failure = folded.progress.failure {
                totals.failure = failure
                return totals
            }
            guard folded.needsCommit else { return totals }
            let finalStep = finalRebuildStep
            let writesBefore = store.writerStatistics.completedWrites
            let outcome = try await store.writeTables { txn in try CatchUpBatch.commit(txn, folded, projection: projection, finalStep: finalStep) }
            // More jobs completed while this one waited or ran than this runner's lanes make:
            // appends (or other writers) are going on.
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
        while try await !store.writeTables({ txn in try CatchUpBatch.clear(projection, generation: generation, limit: limit, txn) }) {}
    }

    /// One batch of `projection` folded in a read snapshot on the fold queue.
    private func fold(_ projection: any Projection, _ slot: Slot, maximumRows: Int, timed: Bool) async throws -> FoldedBatch? {
        let store = store
        let limit = batchSize
        return try await withCheckedThrowingContinuation { continuation in
            Self.foldQueue.async {
                FoldThread.lowerPriority()
                continuation.resume(
                    with: Result {
                        try store.readTables { txn in
                            try CatchUpBatch.fold(txn, projection: projection, slot: slot, limit: limit, maximumRows: maximumRows, timed: timed)
                        }
                    })
            }
        }
    }
}
