import EventStoreCore

/// A runner on a store opened read-only (`EventStore/OpenMode/readOnly`) writes nothing: it
/// catches nothing up, rebuilds nothing, and answers queries from the stored states that can
/// answer as they stand. Another process that may write the store (`esctl serve`, any query
/// there) keeps them caught up; this one sees its commits.
extension ProjectionRunner {
    /// Whether the store was opened read-only: queries then answer from stored states as they
    /// stand, and nothing is caught up or rebuilt.
    public var isReadOnly: Bool { store.mode == .readOnly }

    /// How long a read-only query waits for another process to catch its projection up with the
    /// head as it was when asked, before it says the projection is behind: the writer applies a
    /// commit a few milliseconds after it.
    static let readOnlyGrace: Duration = .seconds(1)

    /// The first and the longest wait between two looks at a checkpoint another process moves
    /// (in a write of its tables, which no commit of the log announces); the waits double.
    static let readOnlyPollIntervals: (first: Duration, longest: Duration) = (.milliseconds(50), .seconds(1))

    /// A read-only `read(_:_:)`: `body` runs on the stored state once it has applied the head
    /// as it was when asked, waiting up to `readOnlyGrace` for another process to get it there.
    func readStanding<T: Sendable>(_ projection: any Projection, _ body: (StoredState) async throws -> T) async throws -> T {
        let head = try await store.headPosition()
        do {
            try await waitUntilApplied(projection.name, position: head, timeout: Self.readOnlyGrace)
        } catch ProjectionError.Code.timedOut {
            // Said below, as the projection being behind.
        }
        return try await readStanding(projection, atLeast: head, body)
    }

    /// Runs `body` on the stored state of `projection` in one snapshot, if that state can answer
    /// (see `checkStanding(_:atLeast:in:)`) and has applied `position`.
    ///
    /// Throws `ProjectionError/Code/notCaughtUp` otherwise, saying how to catch it up, and
    /// the store's errors.
    func readStanding<T: Sendable>(_ projection: any Projection, atLeast position: UInt64, _ body: (StoredState) async throws -> T) async throws
        -> T
    {
        try await store.readTables { txn in
            try await Self.checkStanding(projection, atLeast: position, in: txn)
            return try await body(try await StoredState.serving(txn, projection.name))
        }
    }

    /// The head, if every one of `selected` is caught up with it as it stands (a read-only
    /// store's catch-up); throws `ProjectionError/Code/notCaughtUp` for the first that is not.
    func checkStanding(_ selected: [any Projection]) async throws -> UInt64 {
        for projection in selected { try await reopenTables(projection) }
        return try await store.readTables { txn in
            let head = try await txn.headPosition()
            for projection in selected { try await Self.checkStanding(projection, atLeast: head, in: txn) }
            return head
        }
    }

    /// Waits, on the runner's clock, until the stored state of `projection` has applied
    /// `position` (another process moves it) and returns its checkpoint. Throws
    /// `ProjectionError/Code/notCaughtUp` at once for a state that cannot answer whatever its
    /// position; cancelled, `CancellationError`.
    func reachStanding(_ projection: any Projection, _ position: UInt64) async throws -> UInt64 {
        var interval = Self.readOnlyPollIntervals.first
        while true {
            try await reopenTables(projection)
            let checkpoint = try await store.readTables { txn in try await Self.checkDefinition(projection, in: txn) }
            if checkpoint >= position { return checkpoint }
            try await clock.sleep(for: interval)
            interval = min(interval * 2, Self.readOnlyPollIntervals.longest)
        }
    }

    /// Looks again for the projection's tables: another process may have made them since this
    /// one opened the store.
    private func reopenTables(_ projection: any Projection) async throws {
        try await store.openTables([Checkpoint.table, Checkpoint.rebuildTable] + Self.storedTables(projection))
    }

    /// Throws `ProjectionError/Code/notCaughtUp` unless the stored state of `projection` can
    /// answer (see `checkDefinition(_:in:)`) and has applied `position`.
    private static func checkStanding(_ projection: any Projection, atLeast position: UInt64, in txn: TableTransaction) async throws {
        let applied = try await checkDefinition(projection, in: txn)
        guard applied >= position else {
            let head = try await txn.headPosition()
            throw ProjectionError(
                .notCaughtUp,
                "The projection '\(projection.name)' has applied the log up to position \(applied) of \(head), and the store is open read-only, so it cannot catch up here: catch it up where the store can be written (`esctl query \(projection.name)` or `esctl serve` there does), or ask for its state as of a position (--as-of, asOf=).",
                projection: projection.name, position: position)
        }
    }

    /// The stored checkpoint of `projection`, after checking that its state was built by the
    /// projection's current definition, and holds no event deleted since unless a rebuild (by a
    /// process that may write) is under way to remove them: the same state a writable runner
    /// serves. Throws `ProjectionError/Code/notCaughtUp` otherwise.
    private static func checkDefinition(_ projection: any Projection, in txn: TableTransaction) async throws -> UInt64 {
        guard let checkpoint = try await CatchUpBatch.readCheckpoint(projection.name, txn) else { return 0 }
        let current = try await ProjectionDefinition(projection, in: txn)
        guard checkpoint.definition.foldsLike(current) else {
            throw ProjectionError(
                .notCaughtUp,
                "The projection '\(projection.name)' \(checkpoint.definition.change(to: current)), and the store is open read-only, so it cannot be rebuilt here: rebuild it where the store can be written (`esctl rebuild \(projection.name)`).",
                projection: projection.name)
        }
        if checkpoint.definition != current, try await CatchUpBatch.readCheckpoint(projection.name, txn, slot: .rebuild) == nil {
            throw ProjectionError(
                .notCaughtUp,
                "The projection '\(projection.name)' holds events deleted since it was built, and the store is open read-only, so it cannot be rebuilt without them here: catch it up where the store can be written (`esctl query \(projection.name)` or `esctl serve` there rebuilds it).",
                projection: projection.name)
        }
        return checkpoint.position
    }
}
