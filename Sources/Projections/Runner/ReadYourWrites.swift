import EventStoreCore

extension ProjectionRunner {
    /// Waits until the projection has applied `position` (an append this client just made, here
    /// or in another process) and returns its checkpoint: with no daemon running, this catches
    /// it up itself with each commit. On a store opened read-only it catches nothing up: it looks
    /// at the checkpoint, which another process moves, at growing intervals (50 ms to 1 s).
    ///
    /// Throws ``ProjectionError/Code/timedOut`` when `timeout` runs out first on the runner's
    /// clock (saying where the
    /// projection and the head are), ``ProjectionError/Code/stopped`` when the projection stops
    /// before `position`, `CancellationError` when cancelled, and the store's errors.
    @discardableResult
    public func waitUntilApplied(_ name: String, position: UInt64, timeout: Duration) async throws -> UInt64 {
        let projection = try projection(named: name)
        let reached = try await withThrowingTaskGroup(of: UInt64?.self) { group in
            group.addTask { try await self.reach(projection.name, position) }
            group.addTask {
                try await self.clock.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        if let reached { return reached }
        let checkpoint = try await self.checkpoint(of: projection.name)
        let head = try await store.headPosition()
        throw ProjectionError(
            .timedOut,
            "The projection '\(name)' did not reach position \(position) within \(timeout.secondsText) s (it is at \(checkpoint), the head is \(head))\(isReadOnly ? "; the store is open read-only here, so only a process that may write it catches it up" : "").",
            projection: name, position: position)
    }

    /// The projection's query once it has applied `minPosition`, waiting at most `timeout`:
    /// how a client reads its own writes. Errors as ``waitUntilApplied(_:position:timeout:)``
    /// and the `query(_:parameters:asOf:)` that takes a name. On a store opened read-only, the
    /// state answers once it has applied `minPosition`, whether or not it has reached the head.
    public func query(
        _ name: String, parameters: QueryParameters = QueryParameters(), minPosition: UInt64, timeout: Duration
    ) async throws -> JSONValue {
        let projection = try checkedQuery(name, parameters)
        try await waitUntilApplied(name, position: minPosition, timeout: timeout)
        if isReadOnly { return try await readStanding(projection, atLeast: minPosition) { try await projection.query($0, parameters) } }
        return try await query(name, parameters: parameters)
    }

    /// The stored checkpoint of the state that answers queries; 0 before the first build.
    func checkpoint(of name: String) async throws -> UInt64 {
        try await store.readTables { txn in try await CatchUpBatch.readCheckpoint(name, txn)?.position ?? 0 }
    }

    private func reach(_ name: String, _ position: UInt64) async throws -> UInt64 {
        if isReadOnly { return try await reachStanding(try projection(named: name), position) }
        while true {
            let checkpoint = try await self.checkpoint(of: name)
            if checkpoint >= position { return checkpoint }
            let head = try await store.headPosition()
            if checkpoint < head {
                try await catchUp([name])
                if head >= position { continue }
            }
            _ = try await store.waitForCommit(after: head)
        }
    }
}

extension Duration {
    /// Whole seconds when whole (`2`), else with their fraction (`0.25`).
    var secondsText: String {
        let seconds = ProjectionRunner.seconds(self)
        return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
