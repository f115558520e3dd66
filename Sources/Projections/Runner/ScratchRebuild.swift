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
    /// short transaction at a time, and stores the rebuild's checkpoint with the last of them.
    /// The rest (the events appended meanwhile, the swap) is the store's usual steps'.
    ///
    /// Why: folded in the store's tables, each batch's rows land all over the tables' B-trees, and
    /// the commits they ride in, shared with appends, write and flush many pages: a rebuild beside
    /// busy appends held the writer for half its time (BENCHMARKS.md, S9). Here the store is
    /// written once per row of the final state, in key order.
    ///
    /// Returns the lane's totals when it is done here (the projection stopped, or no rebuild is
    /// under way any more); nil when the store's steps go on from the copied state (or, for a
    /// rebuild resumed past position 0, from where it stood). A process that dies before the
    /// copy's last transaction leaves the rebuild at position 0: the next one folds again, after
    /// emptying what a copy left.
    func foldInScratch(
        _ projection: any Projection, _ space: any LogScratchTables, timed: Bool, report: (@Sendable (String, UInt64, UInt64) -> Void)?,
        totals: inout LaneTotals
    ) async throws -> LaneTotals? {
        let name = projection.name
        guard let base = try await store.readTables({ txn in try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) }),
            base.position == 0
        else { return nil }
        // What a copy cut short left, a short transaction at a time, each checking that the
        // rebuild is still at `base` (another runner's steps may have moved it on meanwhile).
        let limit = maximumBatchRows
        while true {
            let outcome: Bool? = try await store.writeTables { txn in
                guard try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) == base else { return nil }
                return try await CatchUpBatch.clear(projection, generation: base.generation, limit: limit, txn)
            }
            guard let emptied = outcome else { return nil }
            if emptied { break }
        }
        try await saveFolded(name, base: base, nil)
        let scratch = try await space.scratchTables(for: name)
        defer { scratch.remove() }
        // Folded until within a batch of the head, or until the head runs away from the fold
        // (appends faster than it folds): the store's steps then fold the rest as they would.
        var lag = UInt64.max
        var runningAway = 0
        var reached = base
        var batches = 0
        while true {
            try Task.checkCancellation()
            guard let folded = try await fold(projection, .rebuild, maximumRows: maximumBatchRowsAlone, timed: timed, scratch: scratch) else {
                return totals
            }
            totals.head = folded.head
            if let failure = folded.progress.failure {
                totals.failure = failure
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
            let behind = folded.head - min(folded.head, folded.next.position)
            if behind <= batchSize { break }
            runningAway = behind >= lag ? runningAway + 1 : 0
            if runningAway >= 8 { break }
            lag = behind
        }
        let tables = (projection.tables + [PassedOver.table]).map { StoredState.tableName(name, $0, generation: base.generation) }
        let checkpoint = reached
        logger.info(
            "a rebuild folded apart; copying its state into the store",
            metadata: [LogKeys.projection: "\(name)", LogKeys.position: "\(checkpoint.position)"])
        var copiedRows = 0
        for table in tables {
            var after: [UInt8]?
            while true {
                try Task.checkCancellation()
                let rows = try scratch.rows(table, after: after, maximumBytes: Self.scratchCopyBytes)
                guard let last = rows.last else { break }
                let copied = try await store.writeTables { txn in
                    // Another runner's rebuild (which the owners' lock should rule out): leave it be.
                    guard try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) == base else { return false }
                    for (key, value) in rows { try await txn.put(table, key, value) }
                    txn.releaseReadPages()
                    return true
                }
                guard copied else { return nil }
                copiedRows += rows.count
                after = last.key
            }
        }
        try await store.writeTables { txn in
            guard try await CatchUpBatch.readCheckpoint(name, txn, slot: .rebuild) == base else { return }
            try await txn.put(Checkpoint.rebuildTable, Checkpoint.key(name), checkpoint.encoded)
            try await txn.delete(Checkpoint.rebuildTable, Checkpoint.foldedKey(name))
        }
        logger.info("a rebuild's state was copied", metadata: [LogKeys.projection: "\(name)", LogKeys.count: "\(copiedRows)"])
        return nil
    }
}
