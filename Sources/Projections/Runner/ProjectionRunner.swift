import EventStore
import Foundation
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
    /// True while a (re)build has not yet reached the head.
    public let isBuilding: Bool
    /// Why it is stopped, when its last catch-up failed.
    public let failure: String?
}

/// Keeps projections' states and checkpoints in the store, catches them up with the log,
/// rebuilds them, and answers queries that reflect every append made before the query.
///
/// One runner per store is enough; several (in this or other processes) stay correct because each
/// catch-up reads the checkpoints inside the writer's transaction.
public final class ProjectionRunner: Sendable {
    /// The store the projections read.
    public let store: EventStore
    /// The registered projections, in order.
    public let projections: [any Projection]
    /// How many positions one catch-up transaction covers at most.
    public let batchSize: UInt64
    /// What opening did that a user should hear of: version changes rebuilt, interrupted
    /// rebuilds finished.
    public let notices: [String]
    private let failures = Mutex<[String: ProjectionError]>([:])

    /// Reports a long catch-up's progress: projection names, position reached, head.
    public typealias Progress = @Sendable (_ projections: [String], _ position: UInt64, _ head: UInt64) -> Void

    /// Opens the projections' tables, rebuilds every projection whose stored version differs from
    /// its `version`, and finishes any rebuild a crash interrupted; ``notices`` says which.
    /// With `inspecting` true it rebuilds and finishes nothing (for `verify` and `esctl
    /// projections`): on a store opened read-only, where tables that do not exist read as empty,
    /// it changes nothing at all.
    ///
    /// Throws ``ProjectionError`` with ``ProjectionError/Code/invalidDefinition`` for a bad or
    /// duplicate name, and the store's errors.
    public init(
        store: EventStore, projections: [any Projection], batchSize: UInt64 = 25_000, progress: Progress? = nil,
        inspecting: Bool = false
    ) async throws {
        try Self.validate(projections)
        let tables = { (projection: any Projection) in projection.tables.map { StoredState.tableName(projection.name, $0) } }
        self.store = store
        self.projections = projections
        self.batchSize = max(1, batchSize)
        if projections.isEmpty {
            notices = []
            return
        }
        try await store.openTables([Checkpoint.table] + projections.flatMap(tables))

        let stored = try store.readTables { txn in
            try projections.map { try CatchUpBatch.readCheckpoint($0.name, txn) }
        }
        var notices: [String] = []
        var toFinish: [any Projection] = []
        var toRebuild: [any Projection] = []
        for (projection, checkpoint) in zip(projections, stored) {
            guard let checkpoint else { continue }
            if checkpoint.version != Int64(projection.version) {
                notices.append(
                    "Projection '\(projection.name)' changed from version \(checkpoint.version) to \(projection.version); rebuilding it.")
                toRebuild.append(projection)
            } else if checkpoint.isBuilding && checkpoint.position > 0 {
                notices.append(
                    "Projection '\(projection.name)' was being rebuilt when the store last closed (at position \(checkpoint.position)); finishing the rebuild.")
                toFinish.append(projection)
            }
        }
        self.notices = notices
        guard !inspecting else { return }
        if !toRebuild.isEmpty {
            _ = try await rebuild(toRebuild.map(\.name), progress: progress)
        }
        if !toFinish.isEmpty {
            _ = try await catchUp(toFinish.map(\.name), progress: progress)
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
    /// transactions of at most ``batchSize`` positions. A projection whose `apply` throws stops;
    /// the others go on. Returns the head reached.
    ///
    /// Throws ``ProjectionError/Code/stopped`` for the first stopped projection, after the others
    /// have caught up.
    @discardableResult
    public func catchUp(_ names: [String]? = nil, progress: Progress? = nil) async throws -> UInt64 {
        let selected = try select(names)
        var pending = selected
        var head: UInt64 = 0
        var stopped: [String: ProjectionError] = [:]
        while !pending.isEmpty {
            try Task.checkCancellation()
            let batch = pending
            let limit = batchSize
            let outcome = try await store.writeTables { txn in try CatchUpBatch.run(txn, projections: batch, limit: limit) }
            head = outcome.head
            pending = batch.filter { projection in
                guard let entry = outcome.progress[projection.name] else { return false }
                if let failure = entry.failure {
                    stopped[projection.name] = failure
                    return false
                }
                return entry.checkpoint < outcome.head
            }
            let reached = batch.compactMap { outcome.progress[$0.name]?.checkpoint }.min() ?? head
            progress?(batch.map(\.name), reached, head)
        }
        failures.withLock { failures in
            for projection in selected { failures[projection.name] = stopped[projection.name] }
        }
        if let first = selected.lazy.compactMap({ stopped[$0.name] }).first { throw first }
        return head
    }

    /// Empties the named projections' tables (all when nil) and folds them again from the
    /// start. Returns, per projection, the events applied, the time taken and the state hash.
    public func rebuild(_ names: [String]? = nil, progress: Progress? = nil) async throws -> [RebuildReport] {
        let selected = try select(names)
        let started = ContinuousClock.now
        try await store.writeTables { txn in
            for projection in selected { try CatchUpBatch.reset(projection, txn) }
        }
        var applied: [String: Int] = [:]
        var skipped: [String: Int] = [:]
        var timed: [String: Duration] = [:]
        var pending = selected
        var stopped: ProjectionError?
        while !pending.isEmpty {
            // Between batches: a cancelled rebuild leaves its state building, which the next
            // open finishes.
            try Task.checkCancellation()
            let batch = pending
            let limit = batchSize
            let outcome = try await store.writeTables { txn in try CatchUpBatch.run(txn, projections: batch, limit: limit, timed: true) }
            pending = batch.filter { projection in
                guard let entry = outcome.progress[projection.name] else { return false }
                applied[projection.name, default: 0] += entry.applied
                skipped[projection.name, default: 0] += entry.skipped
                timed[projection.name, default: .zero] += entry.time
                if let failure = entry.failure {
                    stopped = stopped ?? failure
                    failures.withLock { $0[projection.name] = failure }
                    return false
                }
                return entry.checkpoint < outcome.head
            }
            let reached = batch.compactMap { outcome.progress[$0.name]?.checkpoint }.min() ?? outcome.head
            progress?(batch.map(\.name), reached, outcome.head)
        }
        if let stopped { throw stopped }
        let seconds = Self.seconds(since: started)
        return try store.readTables { txn in
            try selected.map { projection in
                failures.withLock { _ = $0.removeValue(forKey: projection.name) }
                let checkpoint = try CatchUpBatch.readCheckpoint(projection.name, txn)?.position ?? 0
                let state = StoredState(transaction: txn, projection: projection.name)
                return RebuildReport(
                    projection: projection.name, eventsApplied: applied[projection.name] ?? 0,
                    eventsSkipped: skipped[projection.name] ?? 0, checkpoint: checkpoint,
                    seconds: Self.seconds(timed[projection.name] ?? .zero), elapsedSeconds: seconds,
                    hash: try StateHash.of(tables: projection.tables, in: state))
            }
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        seconds(ContinuousClock.now - start)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    // MARK: Reading

    /// Catches the projection up with the head, then runs `body` on its stored state in one
    /// snapshot: the state reflects every append that returned before this call.
    public func read<T>(_ name: String, _ body: (StoredState) throws -> T) async throws -> T {
        let projection = try projection(named: name)
        try await catchUp([projection.name])
        return try store.readTables { txn in try body(StoredState(transaction: txn, projection: projection.name)) }
    }

    /// The projection's query, on the state reflecting every append made before this call, or on
    /// the state as of `position` (see ``state(of:asOf:)``) when one is given.
    public func query(_ name: String, parameters: QueryParameters = QueryParameters(), asOf position: UInt64? = nil) async throws -> JSONValue {
        let projection = try projection(named: name)
        for parameter in parameters.values.keys.sorted() where !projection.queryParameters.contains(parameter) {
            let known = projection.queryParameters.isEmpty ? "none" : projection.queryParameters.joined(separator: ", ")
            throw ProjectionError(
                .invalidQuery, "The projection '\(name)' takes no '\(parameter)' parameter; it takes: \(known).", projection: name)
        }
        if let position {
            return try projection.query(try state(of: name, asOf: position), parameters)
        }
        return try await read(name) { try projection.query($0, parameters) }
    }

    /// The projection's state as of `position`: every event up to it folded in memory, without
    /// touching the stored tables.
    ///
    /// Throws ``ProjectionError/Code/invalidQuery`` when `position` is beyond the head (the state
    /// there is not known yet).
    public func state(of name: String, asOf position: UInt64) throws -> ProjectionState {
        let projection = try projection(named: name)
        let head = try store.headPosition()
        guard position <= head else {
            throw ProjectionError(
                .invalidQuery, "Position \(position) is beyond the head of the log (\(head)); give a position up to \(head).",
                projection: name, position: position)
        }
        var state = ProjectionState(for: projection)
        var next: UInt64 = 1
        let filter = EventFilter(types: projection.eventTypes)
        while next <= position {
            let page = try store.read(from: next, through: position, limit: 1000, filter: filter)
            guard let last = page.last else { break }
            for event in page {
                do {
                    try state.apply(event, with: projection)
                } catch {
                    if projection.errorPolicy == .stop {
                        throw ProjectionError.stopped(name, at: event.position, cause: "\(error)")
                    }
                }
            }
            next = last.position + 1
        }
        return state
    }

    /// The hash of the projection's stored state (as it stands, without catching up).
    public func storedHash(of name: String) throws -> String {
        let projection = try projection(named: name)
        return try store.readTables { txn in
            try StateHash.of(tables: projection.tables, in: StoredState(transaction: txn, projection: name))
        }
    }

    /// Where every projection stands, without catching up.
    public func statuses() throws -> [ProjectionStatus] {
        let failures = failures.withLock { $0 }
        return try store.readTables { txn in
            let head = try txn.headPosition()
            return try projections.map { projection in
                let checkpoint = try CatchUpBatch.readCheckpoint(projection.name, txn)
                let position = checkpoint?.position ?? 0
                return ProjectionStatus(
                    name: projection.name, version: projection.version, checkpoint: position,
                    lag: head > position ? head - position : 0,
                    hash: try StateHash.of(tables: projection.tables, in: StoredState(transaction: txn, projection: projection.name)),
                    isBuilding: checkpoint?.isBuilding ?? false, failure: failures[projection.name]?.message)
            }
        }
    }

    // MARK: Live

    /// Keeps every projection caught up as commits arrive (from this process or others) until
    /// the returned task is cancelled or the store closes. A stopped projection stays stopped;
    /// the others go on.
    public func runLive() -> Task<Void, Never> {
        Task { [self] in
            var seen = (try? store.headPosition()) ?? 0
            _ = try? await catchUp()
            while !Task.isCancelled {
                do {
                    seen = try await store.waitForCommit(after: seen)
                    _ = try await catchUp()
                } catch is ProjectionError {
                    continue
                } catch {
                    return
                }
            }
        }
    }
}

extension ProjectionRunner {
    /// Checks every projection's stored state: its checkpoint is at most the head, and with
    /// `deep` its hash equals that of a fold of the log up to its checkpoint (done in memory: the
    /// stored tables are not touched). State built by another version of a projection is passed
    /// over (the next open rebuilds it). Adds each problem to `report` under the check
    /// "projections"; throws the store's errors.
    public func verify(into report: inout VerificationReport, deep: Bool) throws {
        let stored = try store.readTables { txn in
            try projections.map { projection in
                (try CatchUpBatch.readCheckpoint(projection.name, txn), try txn.headPosition())
            }
        }
        for (projection, (checkpoint, head)) in zip(projections, stored) {
            guard let checkpoint else { continue }
            if checkpoint.position > head {
                report.add("projections", "'\(projection.name)' is at position \(checkpoint.position), past the head \(head)")
            }
            // State built by another version of the projection is not damage: the next open
            // rebuilds it. There is nothing to compare it with until then.
            guard checkpoint.version == Int64(projection.version) else { continue }
            guard deep, checkpoint.position <= head else { continue }
            do {
                let expected = try StateHash.of(tables: projection.tables, in: try state(of: projection.name, asOf: checkpoint.position))
                let actual = try storedHash(of: projection.name)
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
