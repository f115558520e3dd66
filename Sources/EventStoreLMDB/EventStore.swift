@_spi(Records) import EventStoreCore
import Foundation
import Synchronization

/// An embedded, append-only event log kept in an LMDB environment (a directory).
///
/// Appends are atomic, guarded by expected versions, idempotent by event id, and committed by one
/// writer thread that groups concurrent appends into one transaction. Reads are synchronous and
/// safe from any thread or task. Open a directory once per process; close the store when done
/// (it also closes when released).
public final class EventStore: Sendable {
    /// Options for opening the store: ``StoreConfiguration``, under the name users look for.
    public typealias Configuration = StoreConfiguration
    /// The directory the store lives in.
    public let path: String
    /// The configuration the store was opened with.
    public let configuration: StoreConfiguration
    /// How the store was opened (``OpenMode/readOnly`` refuses every write).
    public let mode: OpenMode

    let environment: Environment

    /// Whether this handle reads without LMDB's lock: it was opened read-only where this user may
    /// not write `lock.mdb`. Its reads are then correct only while no other process writes the
    /// store (a backup, read-only media); beside a writer, give this user write access to
    /// `lock.mdb`.
    public var readsWithoutLock: Bool { environment.isUnlocked }
    let writer: Writer
    private let directory: StoreDirectory
    private let isClosed = Atomic<Bool>(false)
    /// Opened when the first `close()` has finished, for the calls that came while it ran.
    private let closeFinished = Latch()
    package let headSignal: HeadSignal
    /// The store's metrics (``StoreConfiguration/metricsFactory``).
    package let metrics: StoreMetrics
    let commitWatcher: CommitWatcher
    let tableRegistry = TableRegistry()
    /// The upcasters every read applies (``StoreConfiguration/upcasters``, checked).
    package var upcasting: Upcasting { environment.upcasting }

    /// Opens the store in `path`: by default creating the directory (mode 0700) and the store
    /// when missing; see ``OpenMode`` for opening only an existing store, or reading one without
    /// ever writing to it.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/notFound`` when `mode` needs an
    /// existing store and the path holds none (nothing is created then);
    /// ``EventStoreError/Code/storeUnavailable`` when the path is a file, cannot be read (and,
    /// unless read-only, written), holds something that is not an event store or a store of a
    /// newer format, or is already open in this process; ``EventStoreError/Code/damaged`` when
    /// its data file is empty, truncated or not an LMDB environment; ``EventStoreError/Code/invalidInput``
    /// when the configuration's upcasters have a gap (see ``StoreConfiguration/upcasters``).
    public init(path: String, mode: OpenMode = .createIfMissing, configuration: StoreConfiguration = StoreConfiguration()) throws {
        // Before anything is created or claimed: a gap in a chain changes nothing.
        let upcasting = try Upcasting(configuration.upcasters)
        let directory = try StoreDirectory.prepare(path, mode: mode)
        try OpenDirectories.claim(directory)
        let environment: Environment
        let head: UInt64
        do {
            environment = try Environment(directory: directory, configuration: configuration, upcasting: upcasting, readOnly: mode == .readOnly)
            head = try environment.read { txn in
                try Writer.lastPosition(txn, environment.databases)
            }
        } catch {
            directory.removeCreated()
            OpenDirectories.release(directory)
            throw error
        }
        let watcher: CommitWatcher
        do {
            watcher = try CommitWatcher(environment: environment)
        } catch {
            environment.close()
            OpenDirectories.release(directory)
            throw error
        }
        let headSignal = HeadSignal(
            head: head, pollInterval: configuration.pollInterval, clock: configuration.pollClock, logger: configuration.logger,
            poll: { try watcher.newHead() })
        self.path = path
        self.mode = mode
        self.configuration = configuration
        self.directory = directory
        self.environment = environment
        self.headSignal = headSignal
        let metrics = StoreMetrics(factory: configuration.metricsFactory)
        self.metrics = metrics
        self.commitWatcher = watcher
        self.writer = Writer(
            environment: environment, clock: configuration.clock,
            maximumEventsPerCommit: configuration.maximumEventsPerCommit,
            staleReaderCheckInterval: configuration.staleReaderCheckInterval, slowCommitThreshold: configuration.slowCommitThreshold,
            logger: configuration.logger, metrics: metrics, headSignal: headSignal)
        do {
            // Every read of personal data looks its subject's key up in this table.
            if mode == .readOnly {
                try tableRegistry.openExisting([SubjectKeys.table], in: environment)
            } else {
                try tableRegistry.create([SubjectKeys.table], in: environment)
                try finishForgettingAtOpen()
            }
        } catch {
            close()
            throw error
        }
    }

    /// Finishes the steps of forgets a crash interrupted, before the store is handed out (as
    /// ``EventLog/finishForgetting()`` does): one read when there are none. The rare work is
    /// done by the writer while this thread waits for it (not a task: an open may run on every
    /// thread of the cooperative pool at once).
    private func finishForgettingAtOpen() throws {
        let registry = tableRegistry
        let opened = environment
        let (version, checked) = try opened.read { txn in
            let tables = LMDBTables(txn: txn, environment: opened, registry: registry)
            return (
                try tables.streamVersion(Forgetting.systemStream),
                try SubjectKeys.checkedVersion { key in try tables.withValue(SubjectKeys.table, key) { Array($0) } }
            )
        }
        guard version > checked else { return }
        try tableRegistry.create([SnapshotRows.table], in: opened)
        let environment = opened
        // What is pending is read in the writer's transaction; when no forgotten event is
        // missing, the same transaction finishes.
        let pending: Forgetting.Pending = try waitForWriter { completion in
            TableWriteJob(
                environment: environment, registry: registry,
                body: { txn in
                    let pending = try await Forgetting.pending(in: txn)
                    if pending.toRecord.isEmpty { try await Forgetting.finish(pending, in: txn) }
                    return pending
                }, completion: completion)
        }
        if pending.toRecord.isEmpty { return }
        var appends = [StreamAppend(stream: Forgetting.systemStream, events: pending.forgottenEvents)]
        StoredForm.apply(to: &appends)
        let tables = AppendJob.TableWrites(environment: environment, registry: registry, tracking: nil) { [pending] txn, _ in
            try await Forgetting.finish(pending, in: txn)
        }
        let generator = configuration.idGenerator
        _ = try waitForWriter { completion in AppendJob(appends: appends, idGenerator: generator, tableWrites: tables, completion: completion) }
    }

    /// Submits the job `make` builds and blocks this thread until the writer has done it.
    private func waitForWriter<T: Sendable>(_ make: (@escaping @Sendable (Result<T, any Error>) -> Void) -> any WriteJob) throws -> T {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        try writer.submit(make { result in
            outcome.withLock { $0 = result }
            done.signal()
        })
        done.wait()
        guard let result = outcome.withLock({ $0 }) else { throw EventStoreError(.storageFailure, "The writer finished a job without an outcome.") }
        return try result.get()
    }

    deinit {
        close()
    }

    /// Finishes the appends already queued, then closes the environment and releases the
    /// directory. Later calls on this instance throw ``EventStoreError/Code/closed``. Idempotent;
    /// blocks until the writer has stopped and running reads have ended (except on the writer
    /// thread, when a job's closure held the last reference: it does not wait for itself).
    ///
    /// Must not be called from inside a read or a table transaction's closure: that is a
    /// precondition failure in debug builds, and ignored in release builds.
    public func close() {
        // From inside a read or table transaction, closing would wait for that transaction.
        if ReentrancyWatchdog.isInsideTransaction {
            _ = try? ReentrancyWatchdog.check("close")
            return
        }
        if TableClosure.isRunning { return }
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else {
            // Another call is closing: return when it has finished, as it will (on the writer
            // thread, where a job's closure held the last reference, nothing else can be waiting).
            if !writer.isWriterThread { closeFinished.wait() }
            return
        }
        writer.shutDown()
        headSignal.close()
        environment.close()
        OpenDirectories.release(directory)
        closeFinished.open()
    }

    /// Closes the handle as the synchronous `close()` does, keeping every backend's promise
    /// (``StoreHandle/close()``), on a thread of its own: waiting for the writer and for running
    /// reads never holds a thread of Swift's cooperative pool, on which those reads may need to
    /// resume. Called from inside a read or table transaction's closure, it does nothing.
    public func close() async {
        if ReentrancyWatchdog.isInsideTransaction {
            _ = try? ReentrancyWatchdog.check("close")
            return
        }
        if TableClosure.isRunning { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { [self] in
                close()
                done.resume()
            }
        }
    }

    /// Whether `close()` has been called.
    public var closed: Bool { isClosed.load(ordering: .acquiring) }

    // MARK: Appending

    /// Appends `events` to `stream` atomically (all or none) if the stream's version satisfies
    /// `expectedVersion`, and returns their positions and the stream's new version.
    ///
    /// Idempotent: when every event carries an id that is already recorded in this stream with the
    /// same content, nothing is written and the original positions are returned.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/invalidInput`` when a name, size or
    /// count limit is broken (see ``Limits``), ``EventStoreError/Code/versionConflict`` naming the
    /// expected and actual versions, ``EventStoreError/Code/idempotencyConflict`` when an id is
    /// recorded with other content, ``EventStoreError/Code/closed`` after `close()`. Nothing is
    /// written when it throws.
    public func append(
        to stream: String, events: [NewEvent], expectedVersion: ExpectedVersion = .any
    ) async throws -> AppendResult {
        let results = try await append([StreamAppend(stream: stream, events: events, expectedVersion: expectedVersion)])
        return results[0]
    }

    /// Appends to several streams in one atomic transaction: every expectation is checked and
    /// every event written, or nothing is written. Results come in the order of `appends`; the
    /// events of one call take consecutive positions in that order.
    ///
    /// Idempotency by event id holds across the whole call. A version conflict names every stream
    /// whose expectation failed (``EventStoreError/conflicts``). Errors as in
    /// ``append(to:events:expectedVersion:)``. A stream may come back in a later part of the same
    /// call (to keep an interleaved order) only with the expectation `.any`: the expectation
    /// belongs on its first part.
    public func append(_ appends: [StreamAppend]) async throws -> [AppendResult] {
        try await append(appends, tracking: nil, alsoWriting: nil)
    }

    /// Appends as ``append(_:)`` does, and in the same transaction, once the
    /// events are newly written (not for an idempotent retry, which writes nothing), runs
    /// `alsoWriting` with the tables and the results: what it writes commits with the events or
    /// not at all (a snapshot of state that describes exactly these versions, say).
    ///
    /// `alsoWriting` runs on the writer thread: it must touch only the transaction (a call of the
    /// store's writes from it throws), and may run more than once when the writer retries. Its
    /// own error fails the append, which then writes nothing, and is rethrown here as it was.
    /// Errors otherwise as ``append(_:)``.
    public func append(
        _ appends: [StreamAppend], alsoWriting tables: @escaping @Sendable (TableTransaction, [AppendResult]) async throws -> Void
    ) async throws -> [AppendResult] {
        try await append(appends, tracking: nil, alsoWriting: tables)
    }

    /// Appends as ``append(_:)`` does, on a condition: when an event recorded after
    /// `condition.after` (the whole log when nil) matches `condition.failIfEventsMatch`, nothing
    /// is written and the append throws ``EventStoreError/Code/conditionFailed`` naming the first
    /// such event's position and the item it matched. The check runs inside the write
    /// transaction, after every append committed before it (and the earlier appends of its
    /// group commit), so it is serializable: of racing appends that each would make the other's
    /// condition fail, exactly one commits. It costs a seek per tag or type of each item, never
    /// a scan. A retry with the same event ids returns the original results, as any retry does.
    ///
    /// Errors as ``append(_:)``, plus ``EventStoreError/Code/invalidInput`` for a query without
    /// items or with more than ``Limits`` allows.
    public func append(_ appends: [StreamAppend], condition: AppendCondition) async throws -> [AppendResult] {
        try condition.failIfEventsMatch.validate()
        return try await append(appends, tracking: nil, alsoWriting: nil, condition: condition)
    }

    func append(
        _ appends: [StreamAppend], tracking: TrackingPosition?,
        alsoWriting body: (@Sendable (TableTransaction, [AppendResult]) async throws -> Void)?, condition: AppendCondition? = nil
    ) async throws -> [AppendResult] {
        try Limits.validate(appends)
        var appends = try await sealingPersonalData(appends)
        StoredForm.apply(to: &appends)
        let generator = configuration.idGenerator
        return try await withCheckedThrowingContinuation { continuation in
            let tables = AppendJob.TableWrites(environment: environment, registry: tableRegistry, tracking: tracking, body: body)
            let job = AppendJob(appends: appends, condition: condition, idGenerator: generator, tableWrites: tables) {
                continuation.resume(with: $0)
            }
            do {
                try writer.submit(job)
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// Counters of the writer since this instance opened: how many transactions it committed and
    /// how many jobs (appends and other writes) it completed. Concurrent appends share commits.
    public var writerStatistics: WriterStatistics {
        WriterStatistics(
            commits: writer.commitCount.load(ordering: .relaxed),
            completedWrites: writer.completedJobCount.load(ordering: .relaxed))
    }
}
