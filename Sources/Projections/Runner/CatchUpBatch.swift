import EventStoreCore
import Foundation

/// Which state of a projection a catch-up step builds: the one that answers queries, or the one
/// a rebuild builds beside it until it has caught up with the head.
enum Slot: Sendable, Equatable {
    case serving, rebuild

    var table: String { self == .serving ? Checkpoint.table : Checkpoint.rebuildTable }
}

/// What one batch did to one projection (where it left it is the batch's `next` checkpoint).
struct BatchProgress: Sendable {
    var applied = 0
    var skipped = 0
    var failure: ProjectionError?
    /// The time spent in this projection's applies, when the batch was timed.
    var time: Duration = .zero
}

/// One step of one projection, folded in a read snapshot (off the writer thread), for the writer
/// to commit in one short transaction: the changed rows and the new checkpoint.
struct FoldedBatch: Sendable {
    let projection: String
    let slot: Slot
    /// The checkpoint the fold started from, as stored (nil: none yet). The commit is refused
    /// when it changed meanwhile (another runner moved the state on), and the step folds again.
    let base: Checkpoint?
    /// The checkpoint to store.
    let next: Checkpoint
    /// The changed rows, under the store's table names.
    let changes: [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])]
    /// The head of the log in the fold's snapshot.
    let head: UInt64
    var progress: BatchProgress

    /// Whether the writer has anything to do: rows or a checkpoint to store, or a rebuild to
    /// swap in.
    var needsCommit: Bool { progress.failure == nil && (base != next || slot == .rebuild) }
}

/// What the writer did with a folded batch.
enum CommitOutcome: Sendable, Equatable {
    case committed
    /// A rebuild's state reached the head and now answers queries; the old one is gone. The
    /// counts are those of the last step, folded in the writer's transaction.
    case swapped(applied: Int, skipped: Int)
    /// The checkpoint moved since the fold (another runner); nothing was written.
    case raced
}

/// The two halves of a catch-up step: a fold in a read snapshot, then a commit by the writer.
enum CatchUpBatch {
    /// How many positions a fold reads between letting go of the map's pages. Each release is a
    /// `madvise` that also interrupts the other cores to flush their TLBs: every 2,048 positions
    /// it took 7 % of a rebuild's fold, and every 16,384 the rebuild needs 0.89 × the CPU per
    /// event, its process keeping about 25 MiB more of the map's pages mapped at any size of log
    /// (page cache, not heap: S5 measured, BENCHMARKS.md "Letting go of pages less often").
    static let releaseEvery: UInt64 = 16_384

    /// Folds the events after the slot's checkpoint (at most `limit` positions, and fewer once
    /// `maximumRows` rows have changed, so that the commit stays a short write) in the snapshot
    /// `txn`. Nil for the rebuild slot when no rebuild is under way.
    ///
    /// With `scratch`, the state's rows and the checkpoint (once it has one) are the scratch's,
    /// not the store's: a rebuild folding there (see `ProjectionRunner.foldInScratch`).
    ///
    /// With `pace`, the fold rests and takes turns as a rebuild's pacing says (see
    /// ``RebuildPacing``), giving its turn back before every suspension and at its end.
    static func fold(
        _ txn: TableTransaction, projection: any Projection, slot: Slot, limit: UInt64, maximumRows: Int, timed: Bool,
        scratch: (any ScratchTables)? = nil, pace: FoldPace? = nil
    ) async throws -> FoldedBatch? {
        let name = projection.name
        let head = try await txn.headPosition()
        let stored: Checkpoint?
        if let scratch, let bytes = try scratch.checkpoint() {
            do {
                stored = try Checkpoint(decoding: bytes)
            } catch {
                throw ProjectionError.damaged(name, "its rebuild's scratch checkpoint: \(error)")
            }
        } else {
            stored = try await readCheckpoint(name, txn, slot: slot)
        }
        if slot == .rebuild && stored == nil { return nil }
        // Deletions matter only to a new state's checkpoint; a stored one folds on (see foldsLike).
        let definition = try await ProjectionDefinition(projection, in: txn, countingDeletions: stored == nil)
        let base = stored ?? Checkpoint(building: definition)
        var progress = BatchProgress()
        func result(_ next: Checkpoint, _ changes: [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])] = []) -> FoldedBatch {
            FoldedBatch(projection: name, slot: slot, base: stored, next: next, changes: changes, head: head, progress: progress)
        }
        guard base.definition.foldsLike(definition) else {
            progress.failure = ProjectionError(
                .stopped,
                "The stored state of '\(name)' was built by \(base.definition), not \(ProjectionDefinition(version: definition.version, upcasters: definition.upcasters, deletions: base.deletions)); reopen the store to rebuild it.",
                projection: name, position: base.position)
            return result(base)
        }
        guard base.position < head else { return result(base) }
        let start = base.position + 1
        let end = min(head, start.addingReportingOverflow(limit - 1).overflow ? head : start + (limit - 1))
        // On LMDB every stored row is at hand; elsewhere an event that asks for one not loaded yet
        // is applied again once it is (see RowCache).
        let cache = RowCache(txn)
        let atHand = txn.rowsAtHand
        let rowsMissing: (() -> Bool)? = atHand ? nil : { cache.isMissingRows }
        var state = ProjectionState(projection: name, tables: projection.tables + [PassedOver.table]) { table, key in
            let stored = StoredState.tableName(name, table, generation: base.generation)
            if let scratch { return try scratch.value(stored, key) }
            return atHand ? try txn.valueAtHand(stored, key) ?? nil : try cache.value(stored, key)
        }
        // Operators' decisions to pass over an event (a few events in a small stream of the
        // store's own; read at this snapshot, so a rebuild meets the same ones).
        let decided = projection.errorPolicy == .stop ? try await PassedOver.decisions(for: name, in: txn) : [:]
        let policy = projection.errorPolicy
        let apply = { (event: RecordedEvent, state: inout ProjectionState) throws in try projection.apply(event, to: &state) }
        var reached = base.position
        var pace = pace
        defer { pace?.yieldTurn() }
        var stoppedEarly = false
        var failed = false
        // The log is read in chunks of positions, letting go of the pages each chunk read
        // (a lane that wants few types scans a whole batch between calls of `body`).
        // A typed projection's fast path: events read in place and decoded by its own code.
        let viewApply = atHand ? projection.viewApply : nil
        /// Applies one event: true to go on, false to stop here; nil when it asked for rows not
        /// loaded yet (then it is undone, to be applied again once they are).
        func step(_ event: RecordedEvent) -> Bool? {
            step(event, at: event.position, id: event.id, apply)
        }
        func step<Event>(_ event: Event, at position: UInt64, id: UUID, _ apply: (Event, inout ProjectionState) throws -> Void) -> Bool? {
            pace?.step()
            let started = timed ? ContinuousClock.now : nil
            defer { if let started { progress.time += ContinuousClock.now - started } }
            do {
                let decision = decided.isEmpty ? nil : decided[id]
                guard let passedOver = try state.apply(event, at: position, policy: policy, decision: decision, rowsMissing: rowsMissing, apply) else {
                    return nil
                }
                if passedOver {
                    progress.skipped += 1
                } else {
                    progress.applied += 1
                }
            } catch {
                progress.failure = .stopped(name, at: position, cause: "\(error)")
                failed = true
                return false
            }
            reached = position
            if state.touchedRowCount >= maximumRows && position < end {
                stoppedEarly = true
                return false
            }
            return true
        }
        var chunkStart = start
        while chunkStart <= end && !stoppedEarly && !failed {
            let chunkEnd = end - chunkStart < releaseEvery ? end : chunkStart + (releaseEvery - 1)
            do {
                if let viewApply {
                    // LMDB, a typed projection: every row is at hand and each event is read in
                    // place, decoded by the projection, with no suspension between them.
                    try await txn.forEachView(from: chunkStart, through: chunkEnd, types: projection.eventTypes) { view in
                        step(view, at: view.position, id: view.id, viewApply) ?? true
                    }
                } else if atHand {
                    // LMDB: every row is at hand, so no event waits; the page's events are
                    // applied with no suspension between them.
                    try await txn.forEachEvent(from: chunkStart, through: chunkEnd, types: projection.eventTypes, synchronously: { step($0) ?? true })
                } else {
                    try await txn.forEachEvent(from: chunkStart, through: chunkEnd, types: projection.eventTypes) { event in
                        // The read may suspend between two events: the turn is never held across
                        // it (a lane waiting for it holds a fold thread the holder may need).
                        defer { pace?.yieldTurn() }
                        while true {
                            if let goOn = step(event) { return goOn }
                            pace?.yieldTurn()
                            try await cache.load()
                        }
                    }
                }
            } catch let error as EventStoreError where error.code == .upcastFailed {
                // An event its upcaster cannot bring to the newest shape is what an apply that
                // throws is: passed over under the .skip policy (and the fold goes on after it),
                // else it stops this projection there; the other projections go on.
                if policy == .skip, let position = error.position, position >= chunkStart, position <= chunkEnd {
                    try state.put(PassedOver.table, PassedOver.key(position), error.message)
                    progress.skipped += 1
                    reached = position
                    chunkStart = position + 1
                    pace?.yieldTurn()
                    continue
                }
                progress.failure = ProjectionError(
                    .stopped,
                    "The projection '\(name)' stopped at position \(error.position ?? reached + 1): \(error.message) Fix the upcaster (a new revision rebuilds the projections that read its type), or give the projection the .skip error policy.",
                    projection: name, position: error.position ?? reached + 1)
                failed = true
            }
            txn.releaseReadPages()
            // The next chunk's read may suspend: the turn is given back first.
            pace?.look(takingTurn: false)
            pace?.yieldTurn()
            chunkStart = chunkEnd + 1
        }
        // A stop throws the batch away: tables and checkpoint stay as the last commit left them.
        if progress.failure != nil { return result(base) }
        let changes: [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])]
        do {
            changes = try state.changes().map { (StoredState.tableName(name, $0.table, generation: base.generation), $0.rows) }
        } catch {
            // A row that cannot be written stops the projection where it stood.
            progress.failure = error
            return result(base)
        }
        var next = base
        next.position = stoppedEarly ? reached : end
        if slot == .serving { next.isBuilding = base.isBuilding && next.position < head }
        return result(next, changes)
    }

    /// Commits a folded batch in the writer's transaction, unless the checkpoint it started from
    /// changed meanwhile. A rebuild whose state is within `finalStep` positions of the head
    /// folds the rest here and is swapped in (a rebuild chasing a busy log would otherwise never
    /// find the head still where its fold left it): its checkpoint becomes the serving one.
    static func commit(
        _ txn: TableTransaction, _ folded: FoldedBatch, projection: any Projection, finalStep: UInt64
    ) async throws -> CommitOutcome {
        let name = folded.projection
        guard try await readCheckpoint(name, txn, slot: folded.slot) == folded.base else { return .raced }
        try await write(folded, txn)
        let head = try await txn.headPosition()
        guard folded.slot == .rebuild, head - min(head, folded.next.position) <= finalStep else { return .committed }
        var last = folded.next
        var tailProgress = BatchProgress()
        if last.position < head {
            guard let tail = try await fold(txn, projection: projection, slot: .rebuild, limit: finalStep, maximumRows: .max, timed: false) else {
                return .committed
            }
            // A stop in the tail: the rebuild keeps what it has, and its lane meets the stop next.
            guard tail.progress.failure == nil else { return .committed }
            try await write(tail, txn)
            last = tail.next
            tailProgress = tail.progress
        }
        // The old generation's rows are deleted after this, a short transaction at a time
        // (``clear(_:generation:limit:_:)``): emptying a large state here would hold appends back.
        let serving = Checkpoint(
            version: last.version, position: last.position, isBuilding: false, generation: last.generation, upcasters: last.upcasters,
            deletions: last.deletions)
        try await txn.put(Checkpoint.table, Checkpoint.key(name), serving.encoded)
        try await txn.delete(Checkpoint.rebuildTable, Checkpoint.key(name))
        try await txn.delete(Checkpoint.rebuildTable, Checkpoint.foldedKey(name))
        return .swapped(applied: tailProgress.applied, skipped: tailProgress.skipped)
    }

    /// Writes a batch's rows and its checkpoint.
    private static func write(_ folded: FoldedBatch, _ txn: TableTransaction) async throws {
        var written = 0
        for (table, rows) in folded.changes {
            for (key, value) in rows {
                if let value { try await txn.put(table, key, value) } else { try await txn.delete(table, key) }
                written += 1
                // Writing back walks the tables' pages: let go of those passed now and then.
                if written % 2048 == 0 { txn.releaseReadPages() }
            }
        }
        if written > 0 { txn.releaseReadPages() }
        try await txn.put(folded.slot.table, Checkpoint.key(folded.projection), folded.next.encoded)
    }

    /// How far a rebuild of `name` folding in scratch tables has come, as its owner last wrote
    /// it; nil when none is (see ``Checkpoint/foldedKey(_:)``).
    static func readFolded(_ name: String, _ txn: TableTransaction) async throws -> Checkpoint? {
        guard let bytes = try await txn.get(Checkpoint.rebuildTable, Checkpoint.foldedKey(name)) else { return nil }
        do {
            return try Checkpoint(decoding: bytes)
        } catch {
            throw ProjectionError.damaged(name, "its rebuild's progress: \(error)")
        }
    }

    /// A projection's checkpoint in a slot as stored; nil when it has none.
    static func readCheckpoint(_ name: String, _ txn: TableTransaction, slot: Slot = .serving) async throws -> Checkpoint? {
        guard let bytes = try await txn.get(slot.table, Checkpoint.key(name)) else { return nil }
        do {
            return try Checkpoint(decoding: bytes)
        } catch {
            throw ProjectionError.damaged(name, "its checkpoint: \(error)")
        }
    }

    /// Deletes up to `limit` rows of the projection's tables in `generation` (which no checkpoint
    /// names: the one a swap left behind); returns whether they are all empty now.
    static func clear(_ projection: any Projection, generation: Int, limit: Int, _ txn: TableTransaction) async throws -> Bool {
        var deleted = 0
        for table in projection.tables + [PassedOver.table] {
            let name = StoredState.tableName(projection.name, table, generation: generation)
            var keys: [[UInt8]] = []
            try await txn.scan(name) { key, _ in
                keys.append(Array(key))
                return deleted + keys.count < limit
            }
            for key in keys { try await txn.delete(name, key) }
            deleted += keys.count
            // Clearing jobs follow each other: let go of the pages each one walked.
            txn.releaseReadPages()
            if deleted >= limit { return false }
        }
        return true
    }

    /// Starts a rebuild of `projection` from position 0. With no state yet, it builds in place
    /// (there is nothing to serve meanwhile); otherwise beside the serving state, in the other
    /// generation of tables, emptied first (the runner has cleared it already, a short
    /// transaction at a time; this empties whatever is left).
    static func startRebuild(_ projection: any Projection, _ txn: TableTransaction, startedAt: Int64, owner: Int64) async throws {
        let name = projection.name
        let tables = projection.tables + [PassedOver.table]
        let definition = try await ProjectionDefinition(projection, in: txn)
        guard let serving = try await readCheckpoint(name, txn, slot: .serving) else {
            for table in tables { try await txn.removeAll(StoredState.tableName(name, table, generation: 0)) }
            try await txn.delete(Checkpoint.rebuildTable, Checkpoint.key(name))
            try await txn.put(
                Checkpoint.table, Checkpoint.key(name), Checkpoint(building: definition).encoded)
            return
        }
        let generation = 1 - serving.generation
        for table in tables { try await txn.removeAll(StoredState.tableName(name, table, generation: generation)) }
        try await txn.delete(Checkpoint.rebuildTable, Checkpoint.foldedKey(name))
        try await txn.put(
            Checkpoint.rebuildTable, Checkpoint.key(name),
            Checkpoint(building: definition, generation: generation, startedAt: startedAt, owner: owner).encoded)
    }

    /// Marks the rebuild of `name` as resumed by this process now (for its rate).
    static func resumeRebuild(_ name: String, _ txn: TableTransaction, startedAt: Int64, owner: Int64) async throws {
        guard var record = try await readCheckpoint(name, txn, slot: .rebuild) else { return }
        record.startedAt = startedAt
        record.startPosition = record.position
        record.owner = owner
        try await txn.put(Checkpoint.rebuildTable, Checkpoint.key(name), record.encoded)
    }
}
