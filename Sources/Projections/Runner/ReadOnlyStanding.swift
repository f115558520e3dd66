import EventStore

/// A runner on a store opened read-only (``EventStore/OpenMode/readOnly``) writes nothing: it
/// catches nothing up, rebuilds nothing, and answers queries from the stored states that can
/// answer as they stand. Another process that may write the store (`esctl serve`, any query
/// there) keeps them caught up; this one sees its commits.
extension ProjectionRunner {
    /// Whether the store was opened read-only: queries then answer from stored states as they
    /// stand, and nothing is caught up or rebuilt.
    public var isReadOnly: Bool { store.mode == .readOnly }

    /// How often a read-only runner looks at a checkpoint it waits for: another process moves
    /// it, in a write of its tables that no commit of the log announces.
    static let readOnlyPollInterval: Duration = .milliseconds(100)

    /// Runs `body` on the stored state of `projection` in one snapshot, if that state was built
    /// by the projection's current definition and has applied `position` (the head when nil).
    ///
    /// Throws ``ProjectionError/Code/notCaughtUp`` otherwise, saying how to catch it up, and
    /// the store's errors.
    func readStanding<T>(_ projection: any Projection, atLeast position: UInt64?, _ body: (StoredState) throws -> T) throws -> T {
        try store.readTables { txn in
            try Self.checkStanding(projection, atLeast: position ?? (try txn.headPosition()), in: txn)
            return try body(try StoredState.serving(txn, projection.name))
        }
    }

    /// The head, if every one of `selected` is caught up with it as it stands (a read-only
    /// store's catch-up); throws ``ProjectionError/Code/notCaughtUp`` for the first that is not.
    func checkStanding(_ selected: [any Projection]) throws -> UInt64 {
        try store.readTables { txn in
            let head = try txn.headPosition()
            for projection in selected { try Self.checkStanding(projection, atLeast: head, in: txn) }
            return head
        }
    }

    /// The stored checkpoint of `projection`, after checking that its state was built by the
    /// projection's current definition (deletions aside: the state that serves while a rebuild
    /// removes them answers here too); throws ``ProjectionError/Code/notCaughtUp`` otherwise.
    func standingCheckpoint(_ projection: any Projection) throws -> UInt64 {
        try store.readTables { txn in try Self.checkDefinition(projection, in: txn) }
    }

    private static func checkStanding(_ projection: any Projection, atLeast position: UInt64, in txn: TableTransaction) throws {
        let applied = try checkDefinition(projection, in: txn)
        guard applied >= position else {
            let head = try txn.headPosition()
            throw ProjectionError(
                .notCaughtUp,
                "The projection '\(projection.name)' has applied the log up to position \(applied) of \(head), and the store is open read-only, so it cannot catch up here: catch it up where the store can be written (`esctl query \(projection.name)` or `esctl serve` there does), or ask for its state as of a position (--as-of, asOf=).",
                projection: projection.name, position: position)
        }
    }

    private static func checkDefinition(_ projection: any Projection, in txn: TableTransaction) throws -> UInt64 {
        guard let checkpoint = try CatchUpBatch.readCheckpoint(projection.name, txn) else { return 0 }
        let current = try ProjectionDefinition(projection, in: txn, countingDeletions: false)
        guard checkpoint.definition.foldsLike(current) else {
            throw ProjectionError(
                .notCaughtUp,
                "The projection '\(projection.name)' \(checkpoint.definition.change(to: current)), and the store is open read-only, so it cannot be rebuilt here: rebuild it where the store can be written (`esctl rebuild \(projection.name)`).",
                projection: projection.name)
        }
        return checkpoint.position
    }
}
