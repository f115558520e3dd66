import EventStoreCore
import Foundation
import Logging
import Synchronization

/// What a rebuild did to one projection.
public struct RebuildReport: Sendable, Equatable {
    public let projection: String
    /// Events passed to `apply`.
    public let eventsApplied: Int
    /// Events skipped by the `.skip` policy.
    public let eventsSkipped: Int
    /// The position the state was built up to.
    public let checkpoint: UInt64
    /// The time this projection took: its applies and the writing of its rows (projections
    /// rebuilt together share the reading of the log, which is not counted here).
    public let seconds: Double
    /// The wall-clock time of the whole rebuild this projection was part of, up to the state
    /// hashes (the same for every projection rebuilt together).
    public let elapsedSeconds: Double
    /// The state hash after the rebuild.
    public let hash: String
}

/// Where a projection stands.
public struct ProjectionStatus: Sendable, Equatable {
    public let name: String
    public let version: Int
    /// The last position applied.
    public let checkpoint: UInt64
    /// How many positions the checkpoint is behind the head.
    public let lag: UInt64
    /// The hash of the stored state.
    public let hash: String
    /// True while a (re)build is under way: from its start until the state first reaches the head.
    public let isBuilding: Bool
    /// Why it is stopped, when its last catch-up failed.
    public let failure: String?
    /// How many events it passed over (its skip policy, or operators' decisions).
    public let eventsSkipped: Int
    /// The first of them (at most ``ProjectionStatus/listedSkips``), with the reason for each.
    public let skippedPositions: [PassedOver.Entry]
    /// A rebuild under way beside the state that serves (whose checkpoint, lag and hash these
    /// are); nil when none is.
    public let rebuild: RebuildStatus?

    /// How many passed-over events a status lists.
    public static let listedSkips = 100
}

/// A rebuild under way beside the state that answers queries.
public struct RebuildStatus: Sendable, Equatable {
    /// The last position the new state has applied.
    public let position: UInt64
    /// How many positions it is behind the head.
    public let lag: UInt64
    /// Positions folded per second since the rebuild started (or was resumed by the process
    /// running it), by the store's clock; nil before a second has passed or while nothing is
    /// folded yet (a rebuild waiting for its turn).
    public let positionsPerSecond: Double?

    init(_ record: Checkpoint, head: UInt64, now: Int64) {
        position = record.position
        lag = head > record.position ? head - record.position : 0
        let elapsed = now.subtractingReportingOverflow(record.startedAt)
        let folded = record.position >= record.startPosition ? record.position - record.startPosition : 0
        positionsPerSecond = !elapsed.overflow && record.startedAt > 0 && elapsed.partialValue >= 1_000_000 && folded > 0
            ? Double(folded) / (Double(elapsed.partialValue) / 1e6) : nil
    }
}

/// Keeps projections' states and checkpoints in the store, catches them up with the log,
/// rebuilds them, and answers queries that reflect every append made before the query.
///
/// One runner per store is enough; several (in this or other processes) stay correct because each
/// catch-up reads the checkpoints inside the writer's transaction.
public final class ProjectionRunner: Sendable {
    /// The store the projections read.
    public let store: any ProjectionStore
    /// The registered projections, in order.
    public let projections: [any Projection]
    /// Each projection's lag, as a gauge.
    let metrics: ProjectionMetrics
    /// How many positions one catch-up batch covers at most.
    public let batchSize: UInt64
    /// How many rows a batch may change before it is committed (fewer positions then) while
    /// other writes go on: each commit is then a short write job, interleaved with appends. The
    /// default, 384, is what `esbench`'s S9 measured best for appends beside a rebuild
    /// (BENCHMARKS.md).
    public let maximumBatchRows: Int
    /// How many rows a batch may change when the lane met no other write while it folded and
    /// committed its last batch (at least ``maximumBatchRows``): fewer, larger commits fold
    /// faster (a row changed by many events is read and written once per batch), and a batch's
    /// rows are what a fold holds in memory.
    public let maximumBatchRowsAlone: Int
    /// How many projections fold at once (each on a thread of its own, off the writer's).
    public let parallelism: Int
    /// How much CPU a rebuild's folds take while others write (``RebuildPacing``).
    public let rebuildPacing: RebuildPacing
    /// The budget and turn of this runner's rebuild lanes; nil when they never rest.
    let rebuildPacer: RebuildPacer?
    /// A rebuild within this many positions of the head folds the rest in the writer's
    /// transaction and is swapped in there (so that it finishes while appends go on).
    public let finalRebuildStep: UInt64
    /// What opening did that a user should hear of: version changes rebuilt, interrupted
    /// rebuilds finished (or, on a store opened read-only, what it would do).
    public let notices: [String]
    private let failures = Mutex<[String: ProjectionError]>([:])
    /// The store's deletion count when every projection's state was last found up to date with
    /// it: catch-ups skip the check of each projection while it has not changed.
    private let checkedDeletions = Mutex<UInt64?>(nil)
    /// Where rebuilds, stops and passed-over events are told.
    let logger: Logger
    /// The clock that times waits for a position (``waitUntilApplied(_:position:timeout:)``): a
    /// test clock in tests.
    let clock: any Clock<Duration>

    /// Reports a long catch-up's progress: projection names, position reached, head.
    public typealias Progress = @Sendable (_ projections: [String], _ position: UInt64, _ head: UInt64) -> Void

    /// Opens the projections' tables, rebuilds every projection whose stored version differs from
    /// its `version` (beside the old state, which serves queries until the new one has caught
    /// up), and finishes any rebuild a crash interrupted; ``notices`` says which.
    /// With `inspecting` true it rebuilds and finishes nothing (for `verify` and `esctl
    /// projections`): on a store opened read-only, where tables that do not exist read as empty,
    /// it changes nothing at all. A store opened read-only is always inspected so: its queries
    /// answer from the states that are caught up as they stand (``isReadOnly``). With `finishingRebuilds` false it leaves a rebuild beside a
    /// whole old state for later, whoever started it (a one-shot query answers from the old
    /// state at once). A rebuild another living process is running is never taken over (unless
    /// no state can serve meanwhile: then this one helps). `parallelism` defaults to the number
    /// of processors. `rebuildPacing` bounds the CPU rebuilds take while others write (a
    /// serving state's catch-ups are never paced). `clock` times the waits for a position.
    ///
    /// Throws ``ProjectionError`` with ``ProjectionError/Code/invalidDefinition`` for a bad or
    /// duplicate name, and the store's errors.
    public init(
        store: any ProjectionStore, projections: [any Projection], batchSize: UInt64 = 25_000, maximumBatchRows: Int = 384,
        maximumBatchRowsAlone: Int = 4096,
        parallelism: Int? = nil, finalRebuildStep: UInt64 = 256, rebuildPacing: RebuildPacing = .default, progress: Progress? = nil,
        inspecting: Bool = false, finishingRebuilds: Bool = true, logger: Logger? = nil,
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws {
        try Self.validate(projections)
        self.clock = clock
        self.logger = logger ?? store.configuration.logger
        self.store = store
        self.projections = projections
        self.batchSize = max(1, batchSize)
        self.maximumBatchRows = max(1, maximumBatchRows)
        self.maximumBatchRowsAlone = max(self.maximumBatchRows, maximumBatchRowsAlone)
        self.parallelism = max(1, parallelism ?? ProcessInfo.processInfo.activeProcessorCount)
        self.finalRebuildStep = finalRebuildStep
        self.rebuildPacing = rebuildPacing
        rebuildPacer = rebuildPacing.rests
            ? RebuildPacer(rebuildPacing, ownWrites: 2, writes: { [store] in store.writerStatistics.completedWrites }) : nil
        metrics = ProjectionMetrics(projections: projections, factory: store.configuration.metricsFactory)
        if projections.isEmpty {
            notices = []
            return
        }
        try await store.openTables([Checkpoint.table, Checkpoint.rebuildTable] + projections.flatMap(Self.storedTables))

        let stored = try await Self.checkpoints(of: projections, in: store)
        // A read-only open rebuilds and finishes nothing: its notices say so.
        let readOnly = store.mode == .readOnly
        let rebuildingIt = readOnly ? "the store is open read-only, so it is not rebuilt here" : "rebuilding it"
        let finishingIt = readOnly ? "the store is open read-only, so the rebuild is not finished here" : "finishing the rebuild"
        var notices: [String] = []
        var toFinish: [any Projection] = []
        var toResume: [any Projection] = []
        var toRebuild: [any Projection] = []
        for (projection, (serving, rebuilding, definition)) in zip(projections, stored) {
            // A rebuild that differs only in deletions is its living owner's to finish (a catch-up
            // rebuilds again if it swaps a state that deletions made stale); a dead owner's starts again.
            if let rebuilding, rebuilding.definition.foldsLike(definition) {
                let canServe = serving?.definition.foldsLike(definition) == true
                if canServe, try await RebuildOwners.isRunning(owner: rebuilding.owner, in: store, projection: projection.name) {
                    continue  // another process's rebuild: the old state serves until it swaps
                }
                if canServe && !finishingRebuilds {
                    notices.append(
                        "Projection '\(projection.name)' has an interrupted rebuild (at position \(rebuilding.position)); the old state answers until `esctl rebuild \(projection.name)` finishes it.")
                    continue
                }
                if rebuilding.definition != definition {
                    // Events it folded were deleted since: start it again.
                    notices.append("Projection '\(projection.name)' \(rebuilding.definition.change(to: definition)); \(rebuildingIt).")
                    toRebuild.append(projection)
                    continue
                }
                notices.append(
                    "Projection '\(projection.name)' was being rebuilt when the store last closed (at position \(rebuilding.position)); \(finishingIt).")
                toResume.append(projection)
            } else if let checkpoint = rebuilding ?? serving, checkpoint.definition != definition {
                notices.append("Projection '\(projection.name)' \(checkpoint.definition.change(to: definition)); \(rebuildingIt).")
                toRebuild.append(projection)
            } else if let serving, serving.isBuilding && serving.position > 0 {
                notices.append(
                    "Projection '\(projection.name)' was being rebuilt when the store last closed (at position \(serving.position)); \(finishingIt).")
                toFinish.append(projection)
            }
        }
        self.notices = notices
        for notice in notices { self.logger.info("\(notice)") }
        guard !inspecting, !readOnly else { return }
        if !toRebuild.isEmpty {
            _ = try await rebuild(toRebuild.map(\.name), progress: progress)
        }
        if !toResume.isEmpty {
            let now = store.configuration.clock().microsecondsSince1970
            let resumed = toResume.map(\.name)
            let owner = try await store.ownerID
            try await store.writeTables { txn in
                for name in resumed { try await CatchUpBatch.resumeRebuild(name, txn, startedAt: now, owner: owner) }
            }
            _ = try await finishRebuilds(toResume, progress: progress, started: .now)
        }
        if !toFinish.isEmpty {
            _ = try await catchUp(toFinish.map(\.name), progress: progress)
        }
    }

    /// The store's names of a projection's tables, in both generations.
    static func storedTables(_ projection: any Projection) -> [String] {
        (projection.tables + [PassedOver.table]).flatMap { table in
            [0, 1].map { StoredState.tableName(projection.name, table, generation: $0) }
        }
    }

    private static func validate(_ projections: [any Projection]) throws(ProjectionError) {
        var names = Set<String>()
        for projection in projections {
            for name in [projection.name] + projection.tables {
                guard !name.isEmpty, name.utf8.count <= 100,
                    name.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0) })
                else {
                    throw ProjectionError(
                        .invalidDefinition,
                        "The name '\(name)' of projection '\(projection.name)' must be 1 to 100 letters, digits, '-', '_' or '.'.",
                        projection: projection.name)
                }
            }
            guard names.insert(projection.name).inserted else {
                throw ProjectionError(.invalidDefinition, "Two projections are named '\(projection.name)'; give each its own name.", projection: projection.name)
            }
            guard Set(projection.tables).count == projection.tables.count else {
                throw ProjectionError(.invalidDefinition, "The projection '\(projection.name)' lists a table twice.", projection: projection.name)
            }
            if let reserved = projection.tables.first(where: { $0.hasPrefix("_") }) {
                throw ProjectionError(
                    .invalidDefinition, "The table '\(reserved)' of projection '\(projection.name)' starts with '_', which the runner keeps for its own tables.",
                    projection: projection.name)
            }
        }
    }

    /// The projection registered under `name`; throws ``ProjectionError/Code/unknownProjection``
    /// naming the known ones.
    public func projection(named name: String) throws -> any Projection {
        guard let projection = projections.first(where: { $0.name == name }) else {
            let known = projections.map(\.name).joined(separator: ", ")
            throw ProjectionError(.unknownProjection, "There is no projection named '\(name)'; the projections are: \(known).")
        }
        return projection
    }

    /// The named projections in the order first named (a name given twice counts once: folding
    /// one projection twice in a batch would count its events twice), all when nil.
    private func select(_ names: [String]?) throws -> [any Projection] {
        guard let names else { return projections }
        var seen = Set<String>()
        return try names.filter { seen.insert($0).inserted }.map { try projection(named: $0) }
    }

    // MARK: Catching up

    /// Applies every event up to the current head to the named projections (all when nil), in
    /// batches of at most ``batchSize`` positions, each folded off the writer thread and
    /// committed in one short transaction; independent projections fold in parallel. A
    /// projection whose `apply` throws stops; the others go on. Returns the head reached.
    ///
    /// Throws ``ProjectionError/Code/stopped`` for the first stopped projection, after the others
    /// have caught up. On a store opened read-only it writes nothing: it returns the head if
    /// every named projection is caught up with it already, and throws
    /// ``ProjectionError/Code/notCaughtUp`` otherwise.
    @discardableResult
    public func catchUp(_ names: [String]? = nil, progress: Progress? = nil) async throws -> UInt64 {
        let selected = try select(names)
        if isReadOnly { return try await checkStanding(selected) }
        // A full catch-up (the live loop's, esctl's) rebuilds what deletions made stale; a
        // query's own catch-up does not wait for a rebuild: the old state answers meanwhile.
        if names == nil { try await rebuildAfterDeletions(selected, progress: progress) }
        let totals = try await runLanes(selected.map { ($0, .serving) }, timed: false, progress: progress)
        failures.withLock { failures in
            for projection in selected { failures[projection.name] = totals[projection.name]?.failure }
        }
        for projection in selected {
            guard let lane = totals[projection.name] else { continue }
            if lane.skipped > 0 {
                logger.info(
                    "a projection passed over events it cannot apply",
                    metadata: [LogKeys.projection: "\(projection.name)", LogKeys.count: "\(lane.skipped)"])
            }
            if let failure = lane.failure {
                logger.info("a projection stopped", metadata: [LogKeys.projection: "\(projection.name)", LogKeys.reason: "\(failure.message)"])
            }
        }
        let head = try await store.headPosition()
        for projection in selected {
            if let reached = totals[projection.name]?.head { metrics.lag(projection.name, head > reached ? head - reached : 0) }
        }
        if let first = selected.lazy.compactMap({ totals[$0.name]?.failure }).first { throw first }
        return selected.compactMap { totals[$0.name]?.head }.max() ?? 0
    }

    /// Rebuilds, beside the state that serves, each of `selected` whose state holds events a
    /// deletion removed since it was built (its definition differs only in deletions), unless a
    /// living process is rebuilding it already. A projection that consumes `$StreamDeleted`
    /// events handles deletions itself and is never rebuilt for them.
    private func rebuildAfterDeletions(_ selected: [any Projection], progress: Progress?) async throws {
        guard !selected.isEmpty else { return }
        // One read when no deletion happened since every state was last found up to date.
        let checked = checkedDeletions.withLock { $0 }
        let (deletions, candidates, allCurrent) = try await store.readTables { txn -> (UInt64, [(name: String, rebuilding: Checkpoint?)], Bool) in
            let deletions = try await txn.deletionFingerprint(consuming: nil)
            if deletions == checked { return (deletions, [], false) }
            var allCurrent = true
            var candidates: [(name: String, rebuilding: Checkpoint?)] = []
            for projection in selected {
                let definition = try await ProjectionDefinition(projection, in: txn)
                let rebuilding = try await CatchUpBatch.readCheckpoint(projection.name, txn, slot: .rebuild)
                guard let serving = try await CatchUpBatch.readCheckpoint(projection.name, txn) else {
                    allCurrent = false  // a first build under way records its own count when it commits
                    continue
                }
                if serving.definition == definition && !serving.isBuilding && rebuilding == nil { continue }
                allCurrent = false
                if serving.definition.foldsLike(definition), serving.definition != definition { candidates.append((projection.name, rebuilding)) }
            }
            return (deletions, candidates, allCurrent)
        }
        var stale: [String] = []
        for (name, rebuilding) in candidates {
            if let rebuilding, try await RebuildOwners.isRunning(owner: rebuilding.owner, in: store, projection: name) { continue }
            stale.append(name)
        }
        // Remembered only when a check of every projection found each state up to date.
        if allCurrent && selected.count == projections.count { checkedDeletions.withLock { $0 = deletions } }
        guard !stale.isEmpty else { return }
        for name in stale { logger.info("Projection '\(name)' read events that were deleted since; rebuilding it.") }
        do {
            _ = try await rebuild(stale, progress: progress)
        } catch let error as ProjectionError where error.code == .stopped {
            // The rebuild stopped at an event its projection cannot apply (recorded where the
            // next attempt resumes): the old state serves, and the other projections catch up.
            logger.info("a rebuild after deletions stopped", metadata: [LogKeys.reason: "\(error.message)"])
        }
    }

    /// Folds the named projections (all when nil) again from the start, beside their current
    /// state, which keeps answering queries (and catching up) until the new one has reached the
    /// head; then one transaction swaps them, and the old tables are emptied after. A rebuild of
    /// the same version whose process died goes on from where it stopped (on a store with
    /// `LogScratchTables`, from the start if it died while folding apart); a projection with no
    /// state yet is built in place. Returns, per projection, the events applied (by this call),
    /// the time taken and the state hash.
    public func rebuild(_ names: [String]? = nil, progress: Progress? = nil) async throws -> [RebuildReport] {
        let selected = try select(names)
        let started = ContinuousClock.now
        logger.info("rebuilding projections", metadata: [LogKeys.projection: "\(selected.map(\.name).joined(separator: ","))"])
        // The generation each rebuild builds in is emptied first (a swap or a killed rebuild may
        // have left rows there), a short transaction at a time.
        let path = store.location
        return try await RebuildOwners.running(path, selected.map(\.name)) {
            let records = try await Self.checkpoints(of: selected, in: store)
            // A rebuild of this version whose process died goes on from where it stopped.
            var resumed: [String] = []
            var fresh: [any Projection] = []
            for (projection, (serving, rebuilding, definition)) in zip(selected, records) {
                if let rebuilding, let serving, rebuilding.definition == definition, serving.definition.foldsLike(definition),
                    !(try await RebuildOwners.isRunning(owner: rebuilding.owner, in: store, projection: projection.name))
                {
                    resumed.append(projection.name)
                    continue
                }
                fresh.append(projection)
                if let serving { try await clear(projection, generation: 1 - serving.generation) }
            }
            let now = store.configuration.clock().microsecondsSince1970
            let (toResume, toStart, owner) = (resumed, fresh, try await store.ownerID)
            try await store.writeTables { txn in
                for name in toResume { try await CatchUpBatch.resumeRebuild(name, txn, startedAt: now, owner: owner) }
                for projection in toStart { try await CatchUpBatch.startRebuild(projection, txn, startedAt: now, owner: owner) }
            }
            return try await finishRebuilds(selected, progress: progress, started: started)
        }
    }

    /// Runs the started rebuilds of `selected` to their swap (a projection rebuilt in place: to
    /// the head) and reports on each.
    private func finishRebuilds(_ selected: [any Projection], progress: Progress?, started: ContinuousClock.Instant) async throws -> [RebuildReport] {
        let slots = try await store.readTables { txn in
            var slots: [Slot] = []
            for projection in selected { slots.append(try await CatchUpBatch.readCheckpoint(projection.name, txn, slot: .rebuild) == nil ? .serving : .rebuild) }
            return slots
        }
        // Between batches: a cancelled rebuild leaves its record, which the next open resumes.
        let totals = try await RebuildOwners.running(store.location, selected.map(\.name)) {
            try await runLanes(Array(zip(selected, slots)).map { (projection: $0.0, slot: $0.1) }, timed: true, progress: progress)
        }
        var stopped: ProjectionError?
        for projection in selected {
            guard let failure = totals[projection.name]?.failure else { continue }
            stopped = stopped ?? failure
            failures.withLock { $0[projection.name] = failure }
        }
        if let stopped { throw stopped }
        let seconds = Self.seconds(since: started)
        for projection in selected { failures.withLock { _ = $0.removeValue(forKey: projection.name) } }
        return try await store.readTables { txn in
            var reports: [RebuildReport] = []
            for projection in selected {
                let lane = totals[projection.name] ?? LaneTotals()
                let checkpoint = try await CatchUpBatch.readCheckpoint(projection.name, txn)?.position ?? 0
                reports.append(
                    RebuildReport(
                        projection: projection.name, eventsApplied: lane.applied, eventsSkipped: lane.skipped, checkpoint: checkpoint,
                        seconds: Self.seconds(lane.time), elapsedSeconds: seconds,
                        hash: try await StateHash.of(projection, in: try await StoredState.serving(txn, projection.name))))
            }
            return reports
        }
    }

    /// Each projection's serving and rebuild checkpoints and its current definition, in one snapshot.
    private static func checkpoints(of projections: [any Projection], in store: any ProjectionStore) async throws
        -> [(serving: Checkpoint?, rebuilding: Checkpoint?, definition: ProjectionDefinition)]
    {
        try await store.readTables { txn in
            var found: [(serving: Checkpoint?, rebuilding: Checkpoint?, definition: ProjectionDefinition)] = []
            for projection in projections {
                found.append(
                    (
                        try await CatchUpBatch.readCheckpoint(projection.name, txn),
                        try await CatchUpBatch.readCheckpoint(projection.name, txn, slot: .rebuild),
                        try await ProjectionDefinition(projection, in: txn)
                    ))
            }
            return found
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        seconds(ContinuousClock.now - start)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    // MARK: Reading

    /// Catches the projection up with the head, then runs `body` on its stored state in one
    /// snapshot: the state reflects every append that returned before this call. On a store
    /// opened read-only, nothing is caught up here: the state answers once another process has
    /// caught it up with the head as it was at the call (waiting up to a second for it), and
    /// ``ProjectionError/Code/notCaughtUp`` says how to catch it up otherwise.
    public func read<T: Sendable>(_ name: String, _ body: (StoredState) async throws -> T) async throws -> T {
        let projection = try projection(named: name)
        if isReadOnly { return try await readStanding(projection, body) }
        try await catchUp([projection.name])
        return try await store.readTables { txn in try await body(try await StoredState.serving(txn, projection.name)) }
    }

    /// The same, for the registered projection of type `P` (a typo does not compile).
    public func read<P: Projection, T: Sendable>(_ type: P.Type, _ body: (StoredState) async throws -> T) async throws -> T {
        try await read(try projection(ofType: type).name, body)
    }

    /// The projection's query, on the state reflecting every append made before this call, or on
    /// the state as of `position` (see ``state(of:asOf:)``) when one is given.
    ///
    /// Throws ``ProjectionError/Code/invalidQuery`` for a parameter the projection does not take
    /// (naming those it takes) or a position beyond the head, ``ProjectionError/Code/stopped``
    /// when the projection is stopped, ``ProjectionError/Code/notCaughtUp`` on a store opened
    /// read-only where it is behind (as the `read` that takes a name says), and the store's errors.
    public func query(_ name: String, parameters: QueryParameters = QueryParameters(), asOf position: UInt64? = nil) async throws -> JSONValue {
        let projection = try checkedQuery(name, parameters)
        if let position {
            return try await projection.query(try await state(of: name, asOf: position).reader, parameters)
        }
        return try await read(name) { try await projection.query($0, parameters) }
    }

    /// The projection `name`, once `parameters` are known to be ones it takes; throws
    /// ``ProjectionError/Code/invalidQuery`` naming those it takes otherwise.
    func checkedQuery(_ name: String, _ parameters: QueryParameters) throws -> any Projection {
        let projection = try projection(named: name)
        let taken = projection.queryParameters.map(\.name)
        for parameter in parameters.values.keys.sorted() where !taken.contains(parameter) {
            let known = taken.isEmpty ? "none" : taken.joined(separator: ", ")
            throw ProjectionError(
                .invalidQuery, "The projection '\(name)' takes no '\(parameter)' parameter; it takes: \(known).", projection: name)
        }
        return projection
    }

    /// The same, for the registered projection of type `P`.
    public func query<P: Projection>(
        _ type: P.Type, parameters: QueryParameters = QueryParameters(), asOf position: UInt64? = nil
    ) async throws -> JSONValue {
        try await query(try projection(ofType: type).name, parameters: parameters, asOf: position)
    }

    /// The registered projection of type `P`; ``ProjectionError/Code/unknownProjection`` when none is.
    public func projection<P: Projection>(ofType type: P.Type) throws -> P {
        guard let projection = projections.lazy.compactMap({ $0 as? P }).first else {
            throw ProjectionError(.unknownProjection, "No projection of type \(P.self) is registered with this runner.")
        }
        return projection
    }

    /// The projection's state as of `position`: every event up to it folded in memory, without
    /// touching the stored tables, passing over events exactly as the runner does (its policy,
    /// and operators' decisions).
    ///
    /// Throws ``ProjectionError/Code/invalidQuery`` when `position` is beyond the head (the state
    /// there is not known yet), ``ProjectionError/Code/stopped`` when the fold stops at an event.
    public func state(of name: String, asOf position: UInt64) async throws -> ProjectionState {
        let projection = try projection(named: name)
        let head = try await store.headPosition()
        guard position <= head else {
            throw ProjectionError(
                .invalidQuery, "Position \(position) is beyond the head of the log (\(head)); give a position up to \(head).",
                projection: name, position: position)
        }
        var state = ProjectionState(for: projection)
        let decided = projection.errorPolicy == .stop ? try await PassedOver.decisions(for: name, in: store) : [:]
        var next: UInt64 = 1
        let filter = EventFilter(types: projection.eventTypes)
        while next <= position {
            let page = try await store.read(from: next, through: position, limit: 1000, filter: filter)
            guard let last = page.last else { break }
            for event in page {
                do {
                    _ = try state.apply(event, policy: projection.errorPolicy, decision: decided[event.id]) { event, state in
                        try projection.apply(event, to: &state)
                    }
                } catch {
                    throw ProjectionError.stopped(name, at: event.position, cause: "\(error)")
                }
            }
            next = last.position + 1
        }
        return state
    }

    /// The hash of the projection's stored state (as it stands, without catching up).
    public func storedHash(of name: String) async throws -> String {
        let projection = try projection(named: name)
        return try await store.readTables { txn in
            try await StateHash.of(projection, in: try await StoredState.serving(txn, name))
        }
    }

    /// Where every projection stands, without catching up.
    public func statuses() async throws -> [ProjectionStatus] {
        let failures = failures.withLock { $0 }
        let now = store.configuration.clock().microsecondsSince1970
        let projections = projections
        let statuses = try await store.readTables { txn in
            let head = try await txn.headPosition()
            var statuses: [ProjectionStatus] = []
            for projection in projections {
                let checkpoint = try await CatchUpBatch.readCheckpoint(projection.name, txn)
                var rebuilding = try await CatchUpBatch.readCheckpoint(projection.name, txn, slot: .rebuild)
                // A rebuild folding in scratch tables: how far its fold has come.
                if let folded = try await CatchUpBatch.readFolded(projection.name, txn), folded.position > rebuilding?.position ?? .max {
                    rebuilding = folded
                }
                let position = checkpoint?.position ?? 0
                let state = try await StoredState.serving(txn, projection.name)
                let skipped = try await state.rows(
                    PassedOver.table, prefix: RowKey(), reverse: false, limit: ProjectionStatus.listedSkips, as: String.self)
                statuses.append(
                    ProjectionStatus(
                        name: projection.name, version: projection.version, checkpoint: position,
                        lag: head > position ? head - position : 0, hash: try await StateHash.of(projection, in: state),
                        isBuilding: (checkpoint?.isBuilding ?? false) || rebuilding != nil, failure: failures[projection.name]?.message,
                        eventsSkipped: try await state.rowCount(PassedOver.table),
                        skippedPositions: skipped.map {
                            PassedOver.Entry(position: $0.key.parts([.number])?.first?.number ?? 0, reason: $0.value)
                        },
                        rebuild: rebuilding.map { RebuildStatus($0, head: head, now: now) }))
            }
            return statuses
        }
        for status in statuses { metrics.lag(status.name, status.lag) }
        return statuses
    }

    // MARK: Operators' decisions

    /// Records a decision to pass over the event at `position` in the projection `name` (an
    /// operator's remedy for a projection stopped by an event it cannot apply). The decision is
    /// an event in the store's own stream ``PassedOver/decisionsStream``, naming the projection
    /// and the event's id: the projection resumes past that event at its next catch-up, a rebuild
    /// makes the same choice, and an export carries it. Returns the decision as recorded.
    ///
    /// Throws ``ProjectionError/Code/invalidQuery`` when there is no event at `position`, when
    /// the projection has applied it already (passing it over now would make a rebuild differ
    /// from the state built live), or when the projection passes over what it cannot apply by
    /// itself (the ``ProjectionErrorPolicy/skip`` policy); and the store's errors.
    @discardableResult
    public func passOver(_ name: String, position: UInt64, reason: String) async throws -> RecordedEvent {
        let projection = try projection(named: name)
        guard projection.errorPolicy == .stop else {
            throw ProjectionError(
                .invalidQuery, "The projection '\(name)' passes over the events it cannot apply by itself (its error policy is skip); nothing to decide.",
                projection: name, position: position)
        }
        guard let event = try await store.event(at: position) else {
            throw ProjectionError(
                .invalidQuery, "There is no event at position \(position) (the head is \(try await store.headPosition())).",
                projection: name, position: position)
        }
        let checkpoint = try await store.readTables { txn in try await CatchUpBatch.readCheckpoint(name, txn)?.position ?? 0 }
        guard position > checkpoint else {
            throw ProjectionError(
                .invalidQuery,
                "The projection '\(name)' has applied position \(position) already (its checkpoint is \(checkpoint)); only an event it has not reached can be passed over.",
                projection: name, position: position)
        }
        let decision = PassedOver.Decision(projection: projection.name, eventId: event.id, position: position, reason: reason)
        let newEvent = try decision.newEvent()
        // The store's own stream: appends through the public API refuse it.
        let result = try await SystemWrites.$isActive.withValue(true) {
            try await store.append(to: PassedOver.decisionsStream, events: [newEvent])
        }
        failures.withLock { _ = $0.removeValue(forKey: projection.name) }
        logger.info(
            "an operator passed over an event",
            metadata: [LogKeys.projection: "\(projection.name)", LogKeys.position: "\(position)", LogKeys.reason: "\(reason)"])
        return result.recordedEvents([newEvent])[0]
    }

    // MARK: Live

    /// The projection daemon, as a task of its own: ``followLive(processors:)`` run until the
    /// returned task is cancelled or the store closes. Cancel the task and await its value to
    /// stop it; where a structured task fits (a task group, a service), call
    /// ``followLive(processors:)`` instead.
    public func runLive(processors: [any Processor] = []) -> Task<Void, Never> {
        Task { [self] in await followLive(processors: processors) }
    }

    /// The projection daemon: keeps every projection caught up, and runs `processors`, as
    /// commits arrive (from this process or others); returns when the calling task is cancelled
    /// or the store closes. A stopped projection or processor stays stopped (logged once per
    /// reason); the others go on. Any other failure (a full disk, a database connection cut) is
    /// retried with a back-off (50 ms, growing to 5 s) on the runner's clock until it passes:
    /// logged at warning when the daemon stops and again when it resumes, so a fault heals by
    /// itself. On a store opened read-only there is nothing it may write: it returns at once.
    public func followLive(processors: [any Processor] = []) async {
        if isReadOnly {
            logger.info("live projections not run: the store is open read-only, and its queries answer from the states as they stand")
            return
        }
        let processorRunner = ProcessorRunner(store: store)
        var seen: UInt64?
        var reported: [String: String] = [:]
        var failures = 0
        while !Task.isCancelled {
            do {
                if let last = seen {
                    seen = try await store.waitForCommit(after: last)
                } else {
                    seen = try await store.headPosition()
                }
                do {
                    _ = try await catchUp()
                } catch is ProjectionError {
                    // Logged by catchUp; the stopped ones stay stopped, the others caught up.
                }
                for processor in processors {
                    do {
                        try await processorRunner.catchUp(processor)
                        reported[processor.name] = nil
                    } catch let error as ProjectionError {
                        if reported.updateValue(error.message, forKey: processor.name) != error.message {
                            logger.info("a processor stopped", metadata: [LogKeys.projection: "\(processor.name)", LogKeys.reason: "\(error.message)"])
                        }
                    }
                }
                if failures > 0 {
                    logger.warning("live projections resumed", metadata: [LogKeys.attempts: "\(failures)"])
                    failures = 0
                }
            } catch is CancellationError {
                return
            } catch let error as EventStoreError where error.code == .closed {
                return
            } catch {
                let delay = Self.liveRetryDelays[min(failures, Self.liveRetryDelays.count - 1)]
                if failures == 0 {
                    logger.warning(
                        "live projections stopped; retrying until they pass", metadata: [LogKeys.reason: "\(error)"])
                }
                failures += 1
                // Commits may have come and gone meanwhile: ask the head again.
                seen = nil
                do {
                    try await clock.sleep(for: delay)
                } catch {
                    return
                }
            }
        }
    }

    /// How long the daemon waits before each retry after a failure: growing to 5 s.
    static let liveRetryDelays: [Duration] = [.milliseconds(50), .milliseconds(200), .seconds(1), .seconds(5)]
}

extension ProjectionRunner {
    /// Checks every projection's stored state: its checkpoint is at most the head, and with
    /// `deep` its hash equals that of a fold of the log up to its checkpoint (done in memory: the
    /// stored tables are not touched). State built by another version of a projection is passed
    /// over (the next open rebuilds it). Adds each problem to `report` under the check
    /// "projections"; throws the store's errors.
    public func verify(into report: inout VerificationReport, deep: Bool) async throws {
        let stored = try await Self.checkpoints(of: projections, in: store)
        let head = try await store.headPosition()
        for (projection, (checkpoint, _, definition)) in zip(projections, stored) {
            guard let checkpoint else { continue }
            if checkpoint.position > head {
                report.add("projections", "'\(projection.name)' is at position \(checkpoint.position), past the head \(head)")
            }
            // State built by another version of the projection (or other upcasters) is not
            // damage: the next open rebuilds it. There is nothing to compare it with until then.
            guard checkpoint.definition == definition else { continue }
            guard deep, checkpoint.position <= head else { continue }
            do {
                let expected = try await StateHash.of(projection, in: try await state(of: projection.name, asOf: checkpoint.position).reader)
                let actual = try await storedHash(of: projection.name)
                if expected != actual {
                    report.add(
                        "projections",
                        "'\(projection.name)' at position \(checkpoint.position) has hash \(actual), a rebuild gives \(expected)")
                }
            } catch let error as ProjectionError where error.code == .stopped {
                report.add("projections", "'\(projection.name)' cannot be rebuilt: \(error.message)")
            }
        }
    }
}

/// The metadata keys this module logs with.
enum LogKeys {
    static let projection = "projection.name"
    static let position = "eventstore.position"
    static let reason = "projection.reason"
    static let count = "projection.count"
    static let attempts = "projection.attempts"
}
