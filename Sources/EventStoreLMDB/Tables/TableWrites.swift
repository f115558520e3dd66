@_spi(Records) import EventStoreCore
import CLMDB
import Foundation

/// A write job that runs a caller's closure in the writer's transaction.
final class TableWriteJob<T: Sendable>: WriteJob, @unchecked Sendable {
    // @unchecked Sendable: touched only by the writer thread after submission (see WriteJob).
    /// Released as soon as the job is done with it: what it captures (the store, say) must not
    /// outlive the job on the writer thread.
    private var body: (@Sendable (TableTransaction) async throws -> T)?
    private let environment: Environment
    private let registry: TableRegistry
    /// Called once, on the writer thread, with the outcome.
    private let completion: @Sendable (Result<T, any Error>) -> Void
    private var result: T?
    private var callerError: (any Error)?
    let eventCount = 0
    /// False for the store's own key writes (``SystemWrites/leavesClockAlone``).
    let readsClock = !SystemWrites.leavesClockAlone

    init(
        environment: Environment, registry: TableRegistry, body: @escaping @Sendable (TableTransaction) async throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        self.environment = environment
        self.registry = registry
        self.body = body
        self.completion = completion
    }

    func run(in context: inout BatchContext) throws(JobFailure) {
        let transaction = TableTransaction(txn: context.txn, environment: environment, registry: registry, isWritable: true)
        defer { transaction.invalidate() }
        result = nil
        callerError = nil
        guard let body else { throw .transaction(EventStoreError(.storageFailure, "A table write ran after it completed.")) }
        do {
            let owned = WriterOwned(transaction)
            result = try context.executor.run { try await body(owned.value) }.get()
        } catch let error as EventStoreError where error.lmdbCode == MDB_MAP_FULL || error.lmdbCode == MDB_TXN_FULL {
            // The map is full or the transaction too big: the writer grows or splits and retries.
            throw .transaction(error)
        } catch {
            // The closure may have written before it threw: roll the batch back without it.
            callerError = error
            throw .poisoned(EventStoreError.wrapping(error))
        }
    }

    func complete() {
        body = nil
        guard let result else {
            completion(.failure(EventStoreError(.storageFailure, "A table write finished without a result.")))
            return
        }
        self.result = nil
        completion(.success(result))
    }

    func fail(_ error: EventStoreError) {
        body = nil
        completion(.failure(callerError ?? error))
    }
}

extension EventStore {
    /// Opens the named tables, creating those that do not exist yet. A table must be opened
    /// (once per process) before it is read or written. Names follow the rules of stream names.
    /// In a store opened read-only nothing is created: a table that does not exist reads as empty,
    /// and a later call looks for it again (another process may have created it).
    ///
    /// Throws ``EventStoreError/Code/invalidInput`` for a bad name or when the store cannot hold
    /// more tables (about 120).
    public func openTables(_ names: [String]) async throws {
        for name in names { try Limits.validateName(name, kind: "table") }
        // Read-only, a table absent at the last look is looked for again: another process may
        // have created it since.
        let missing = tableRegistry.missing(Array(Set(names)).sorted(), includingAbsent: mode == .readOnly)
        guard !missing.isEmpty else { return }
        if mode == .readOnly {
            try tableRegistry.openExisting(missing, in: environment)
            return
        }
        let registry = tableRegistry
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            do {
                try writer.submit(OpenTablesJob(names: missing, registry: registry, continuation: continuation))
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// Which of the named tables exist in the store (whether or not this process opened them),
    /// without creating any.
    public func existingTables(_ names: [String]) throws -> [String] {
        try environment.read { txn in
            try names.filter { name in
                try Array((TableRegistry.prefix + name).utf8).withUnsafeBytes { try txn.get(Environment.mainDatabase, $0) } != nil
            }
        }
    }

    /// Runs `body` on the writer thread, in a write transaction it may share with appends and
    /// other writes (group commit): everything it writes commits together, or, when it throws,
    /// nothing it wrote is kept and its error is rethrown here.
    ///
    /// `body` runs as a task whose every step runs on the writer thread (see ``LogTables``): it
    /// may run more than once when the writer has to retry (after growing the map), and must not
    /// wait for other work of the store. An append or a table write from inside it throws
    /// ``EventStoreError/Code/invalidInput`` at once.
    public func writeTables<T: Sendable>(_ body: @escaping @Sendable (TableTransaction) async throws -> T) async throws -> T {
        let environment = environment
        let registry = tableRegistry
        return try await withCheckedThrowingContinuation { continuation in
            do {
                try writer.submit(TableWriteJob(environment: environment, registry: registry, body: body) { continuation.resume(with: $0) })
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// Runs `body` in one read snapshot of the tables and the log. Keep it short: a long read
    /// holds back page reuse, and growing the map waits for it. `body` may suspend (the snapshot
    /// is not tied to a thread); it must not wait for other work of the store: an append or a
    /// table write from inside it throws ``EventStoreError/Code/invalidInput``. The caller's own
    /// errors come back as they were thrown.
    public func readTables<T: Sendable>(_ body: (TableTransaction) async throws -> T) async throws -> T {
        let environment = environment
        let registry = tableRegistry
        return try await environment.readSuspending { txn in
            let transaction = TableTransaction(txn: txn, environment: environment, registry: registry, isWritable: false)
            defer { transaction.invalidate() }
            return try await TableClosure.$isRunning.withValue(true) { try await body(transaction) }
        }
    }

    /// Waits until the log's head is past `position` (committed by this or any other process)
    /// and returns it. Throws `CancellationError` when cancelled, ``EventStoreError/Code/closed``
    /// when the store closes.
    public func waitForCommit(after position: UInt64) async throws -> UInt64 {
        while true {
            if let head = try commitWatcher.newHead() { headSignal.publish(head) }
            let current = headSignal.current
            if current > position { return current }
            _ = try await headSignal.wait(after: position)
        }
    }
}
