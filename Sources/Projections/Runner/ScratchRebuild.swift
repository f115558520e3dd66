import EventStoreCore

extension ProjectionRunner {
    /// How many bytes of rows one transaction of a scratch's copy writes: a few dozen pages, in
    /// key order, so the commit it rides in stays about as short as one without it.
    static let scratchCopyBytes = 128 * 1024
    /// Every how many batches folded in scratch tables their progress is written to the store.
    static let foldedEvery = 4

    /// Writes (or, with nil, deletes) the progress of the rebuild of `name` folding in scratch
    /// tables, unless its checkpoint is no longer `base`.
    private func saveFolded(_ name: String, base: Checkpoint, _ folded: Checkpoint?) async throws {
        try await store.writeTables { txn in
            guard try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) == base else { return }
            if let folded {
                try await txn.put(Checkpoint.rebuildTable, Checkpoint.foldedKey(name), folded.encoded)
            } else {
                try await txn.delete(Checkpoint.rebuildTable, Checkpoint.foldedKey(name))
            }
        }
    }

    /// Folds a rebuild that starts from position 0 in scratch tables of its own (a store with
    /// ``LogScratchTables``), then copies them into the rebuild's generation in key order, a
    /// short transaction at a time, and stores the rebuild's checkpoint after the last of them.
    /// The rest (the events appended meanwhile, the swap) is the store's usual steps'.
    ///
    /// Why: folded in the store's tables, each batch's rows land all over the tables' B-trees, and
    /// the commits they ride in, shared with appends, write and flush many pages: a rebuild beside
    /// busy appends held the writer for half its time (BENCHMARKS.md, S9). Here the store is
    /// written once per row of the final state, in key order.
    ///
    /// Only this handle's own rebuild folds apart (its owner id in the record), and only one lane
    /// of a projection at a time runs in this process (``RebuildLaneGate``). A stop copies what
    /// was folded before it, so the next attempt starts where this one stopped. Returns the lane's
    /// totals when it is done here (the projection stopped, or no rebuild is under way any more);
    /// nil when the store's steps go on from the copied state (or, for a rebuild past position 0
    /// or another's, from where it stood). A process that dies before the checkpoint is stored
    /// leaves the rebuild at position 0: the next one empties what a copy left and folds again.
    func foldInScratch(
        _ projection: any Projection, _ space: any LogScratchTables, timed: Bool, report: (@Sendable (String, UInt64, UInt64) -> Void)?,
        totals: inout LaneTotals
    ) async throws -> LaneTotals? {
        let name = projection.name
        guard let base = try await store.readTables({ txn in try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) }),
            base.position == 0, base.owner == store.takenOwnerID
        else { return nil }
        try await saveFolded(name, base: base, nil)
        let scratch = try await space.scratchTables(for: name)
        defer { scratch.remove() }
        // Folded until within a batch of the head, or until the head runs away from the fold
        // (appends faster than it folds): the store's steps then fold the rest as they would.
        var runningAway = FallingBehind()
        var reached = base
        var batches = 0
        while true {
            try Task.checkCancellation()
            guard let folded = try await fold(projection, .rebuild, maximumRows: maximumBatchRowsAlone, timed: timed, scratch: scratch) else {
                return totals
            }
            totals.head = folded.head
            if let failure = folded.progress.failure {
                // What was folded before the stop goes into the store: the next attempt (after
                // the event is fixed or passed over) starts there, not from the beginning.
                totals.failure = failure
                if reached.position > 0 { _ = try await copy(scratch, of: projection, base: base, reached: reached) }
                return totals
            }
            try scratch.commit(folded.changes, checkpoint: folded.next.encoded)
            reached = folded.next
            totals.applied += folded.progress.applied
            totals.skipped += folded.progress.skipped
            totals.time += folded.progress.time
            report?(name, folded.next.position, folded.head)
            // Its progress, for the statuses of every process, now and then: a row's write.
            batches += 1
            if batches % Self.foldedEvery == 0 { try await saveFolded(name, base: base, reached) }
            let behind = runningAway.record(folded)
            if behind <= batchSize || runningAway.isRunningAway { break }
        }
        guard try await copy(scratch, of: projection, base: base, reached: reached) else { return totals }
        return nil
    }

    /// Copies the scratch's tables into the rebuild's generation in key order, then stores
    /// `reached` as its checkpoint; false, having stored nothing more, when the rebuild's record
    /// is no longer `base` (it was started again: its generation was emptied with it).
    private func copy(_ scratch: any ScratchTables, of projection: any Projection, base: Checkpoint, reached: Checkpoint) async throws -> Bool {
        let name = projection.name
        let tables = (projection.tables + [PassedOver.table]).map { StoredState.tableName(name, $0, generation: base.generation) }
        logger.info(
            "a rebuild folded apart; copying its state into the store",
            metadata: [LogKeys.projection: "\(name)", LogKeys.position: "\(reached.position)"])
        var copiedRows = 0
        for table in tables {
            var after: [UInt8]?
            while true {
                try Task.checkCancellation()
                let rows = try scratch.rows(table, after: after, maximumBytes: Self.scratchCopyBytes)
                guard let last = rows.last else { break }
                let copied = try await store.writeTables { txn in
                    guard try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) == base else { return false }
                    for (key, value) in rows { try await txn.put(table, key, value) }
                    txn.releaseReadPages()
                    return true
                }
                guard copied else { return false }
                copiedRows += rows.count
                after = last.key
            }
        }
        let stored = try await store.writeTables { txn in
            guard try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) == base else { return false }
            try await txn.put(Checkpoint.rebuildTable, Checkpoint.key(name), reached.encoded)
            try await txn.delete(Checkpoint.rebuildTable, Checkpoint.foldedKey(name))
            return true
        }
        if stored { logger.info("a rebuild's state was copied", metadata: [LogKeys.projection: "\(name)", LogKeys.count: "\(copiedRows)"]) }
        return stored
    }
}
