import EventStore

/// How far one batch moved one projection.
struct BatchProgress: Sendable {
    /// The checkpoint after the batch (unchanged when the projection stopped in it).
    var checkpoint: UInt64
    var applied = 0
    var skipped = 0
    var isBuilding = false
    var failure: ProjectionError?
    /// The time spent in this projection's applies and writes, when the batch was timed.
    var time: Duration = .zero
}

/// One catch-up step, run inside the writer's transaction: read each projection's checkpoint,
/// apply the events after the lowest one (up to `limit` positions), and write every projection's
/// changed rows together with its new checkpoint. A projection whose `apply` throws (with the
/// stop policy) writes nothing in the batch: its tables and checkpoint stay as they were.
enum CatchUpBatch {
    /// With `timed`, each projection's applies and writes are timed (for a rebuild's report; a
    /// clock read costs about what a small apply does, so catch-ups do without).
    static func run(
        _ txn: TableTransaction, projections: [any Projection], limit: UInt64, timed: Bool = false
    ) throws -> (head: UInt64, progress: [String: BatchProgress]) {
        let head = try txn.headPosition()
        var progress: [String: BatchProgress] = [:]
        var states: [String: ProjectionState] = [:]
        var active: [any Projection] = []
        for projection in projections {
            let stored = try readCheckpoint(projection.name, txn)
            let checkpoint = stored ?? Checkpoint(version: Int64(projection.version), position: 0, isBuilding: true)
            guard checkpoint.version == Int64(projection.version) else {
                progress[projection.name] = BatchProgress(
                    checkpoint: checkpoint.position, isBuilding: checkpoint.isBuilding,
                    failure: ProjectionError(
                        .stopped,
                        "The stored state of '\(projection.name)' was built by version \(checkpoint.version), not \(projection.version); reopen the store to rebuild it.",
                        projection: projection.name, position: checkpoint.position))
                continue
            }
            progress[projection.name] = BatchProgress(checkpoint: checkpoint.position, isBuilding: checkpoint.isBuilding)
            active.append(projection)
            let name = projection.name
            states[name] = ProjectionState(projection: name, tables: projection.tables + [PassedOver.table]) { table, key in
                try txn.get(StoredState.tableName(name, table), key)
            }
        }
        guard let start = active.compactMap({ progress[$0.name]?.checkpoint }).min().map({ $0 + 1 }), start <= head else {
            return (head, progress)
        }
        let end = min(head, start &+ limit &- 1)
        let wanted: Set<String>? = active.contains { $0.eventTypes == nil }
            ? nil : active.reduce(into: Set<String>()) { $0.formUnion($1.eventTypes ?? []) }

        // The hot loop works on arrays indexed like `active`, and routes each event type once to
        // the projections that want it: one lookup per event, not several per projection.
        var entries = active.map { progress[$0.name] ?? BatchProgress(checkpoint: 0) }
        var lanes = active.map { states[$0.name] }
        states = [:]
        let appliers = active.map { projection in
            { (event: RecordedEvent, state: inout ProjectionState) throws in try projection.apply(event, to: &state) }
        }
        let policies = active.map(\.errorPolicy)
        // Operators' decisions to pass over an event, for the projections that stop on errors
        // (a few events in a small stream of the store's own; read at this snapshot, so a rebuild
        // meets the same ones).
        let decided = try active.map { projection in
            projection.errorPolicy == .stop ? try PassedOver.decisions(for: projection.name, in: txn) : [:]
        }
        var routes: [String: [Int]] = [:]
        func route(_ type: String) -> [Int] {
            if let known = routes[type] { return known }
            let indices = active.indices.filter { active[$0].eventTypes?.contains(type) ?? true }
            routes[type] = indices
            return indices
        }
        var read = 0
        try txn.forEachEvent(from: start, through: end, types: wanted) { event in
            read += 1
            // A batch reads much of the log and the tables once: keep only recent pages resident.
            if read % 2048 == 0 { txn.releaseReadPages() }
            for index in route(event.type) {
                guard entries[index].failure == nil, event.position > entries[index].checkpoint, var state = lanes[index] else {
                    continue
                }
                lanes[index] = nil  // keep the state uniquely referenced while applying
                let started = timed ? ContinuousClock.now : nil
                defer { if let started { entries[index].time += ContinuousClock.now - started } }
                do {
                    let decision = decided[index].isEmpty ? nil : decided[index][event.id]
                    if try state.apply(event, policy: policies[index], decision: decision, appliers[index]) {
                        entries[index].skipped += 1
                    } else {
                        entries[index].applied += 1
                    }
                } catch {
                    // A stop throws the batch's state away.
                    entries[index].failure = .stopped(active[index].name, at: event.position, cause: "\(error)")
                    lanes[index] = nil
                    continue
                }
                lanes[index] = state
            }
            return true
        }

        for (index, projection) in active.enumerated() {
            let name = projection.name
            var entry = entries[index]
            guard entry.failure == nil, let state = lanes[index] else {
                progress[name] = entry
                continue
            }
            let started = timed ? ContinuousClock.now : nil
            var written = 0
            let changes: [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])]
            do {
                changes = try state.changes()
            } catch {
                // A row that cannot be written stops the projection where it stood.
                entry.failure = error
                progress[name] = entry
                continue
            }
            for (table, rows) in changes {
                let stored = StoredState.tableName(name, table)
                for (key, value) in rows {
                    if let value { try txn.put(stored, key, value) } else { try txn.delete(stored, key) }
                    written += 1
                    // Writing back walks the tables' pages: as tables grow, so would the resident
                    // size, unless the pages already passed are let go now and then.
                    if written % 2048 == 0 { txn.releaseReadPages() }
                }
            }
            if let started { entry.time += ContinuousClock.now - started }
            entry.checkpoint = max(entry.checkpoint, end)
            entry.isBuilding = entry.isBuilding && entry.checkpoint < head
            try txn.put(
                Checkpoint.table, Checkpoint.key(name),
                Checkpoint(version: Int64(projection.version), position: entry.checkpoint, isBuilding: entry.isBuilding).encoded)
            progress[name] = entry
        }
        return (head, progress)
    }

    /// A projection's checkpoint as stored; nil when it has none yet.
    static func readCheckpoint(_ name: String, _ txn: TableTransaction) throws -> Checkpoint? {
        guard let bytes = try txn.get(Checkpoint.table, Checkpoint.key(name)) else { return nil }
        do {
            return try Checkpoint(decoding: bytes)
        } catch {
            throw ProjectionError.damaged(name, "its checkpoint: \(error)")
        }
    }

    /// Empties a projection's tables and sets its checkpoint to 0, building, with its version.
    static func reset(_ projection: any Projection, _ txn: TableTransaction) throws {
        for table in projection.tables + [PassedOver.table] {
            try txn.removeAll(StoredState.tableName(projection.name, table))
        }
        try txn.put(
            Checkpoint.table, Checkpoint.key(projection.name),
            Checkpoint(version: Int64(projection.version), position: 0, isBuilding: true).encoded)
    }
}
