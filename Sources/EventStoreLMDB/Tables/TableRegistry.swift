@_spi(Records) import EventStoreCore
import CLMDB
import Synchronization

/// The named tables this process has opened, with their LMDB handles.
///
/// A table is an LMDB named database called `t/NAME`. Its handle is opened once, by a write
/// job, and becomes usable by every transaction only after that job's transaction committed
/// (LMDB closes handles opened in an aborted transaction), so the registry learns a handle
/// only after the commit.
final class TableRegistry: Sendable {
    /// The prefix of every table's LMDB name, keeping tables apart from the log's own databases.
    static let prefix = "t/"

    /// Each opened table's handle; nil for a table a read-only store does not have (it reads as
    /// empty).
    private let handles = Mutex<[String: MDB_dbi?]>([:])

    /// The handle of an open table, nil for one that a read-only store lacks; throws
    /// ``EventStoreError/Code/notFound`` for one never opened.
    func handle(_ name: String) throws(EventStoreError) -> MDB_dbi? {
        guard let dbi = handles.withLock({ $0[name] }) else {
            throw EventStoreError(.notFound, "The table '\(name)' is not open; open it with openTables first.")
        }
        return dbi
    }

    /// Serialises ``openExisting(_:in:)``: LMDB lets one transaction at a time open handles.
    private let opening = Mutex<Void>(())

    /// The names among `names` that are not open yet; with `includingAbsent`, also those a
    /// read-only store lacked when last looked for (another process may have created them since).
    func missing(_ names: [String], includingAbsent: Bool = false) -> [String] {
        handles.withLock { handles in
            names.filter { name in
                guard let handle = handles[name] else { return true }
                return includingAbsent && handle == nil
            }
        }
    }

    /// Records handles whose opening transaction has committed (nil: the table does not exist
    /// in a read-only store).
    func register(_ opened: [String: MDB_dbi?]) {
        // A handle found replaces an earlier absence; a handle known is kept.
        handles.withLock { $0.merge(opened) { old, new in old ?? new } }
    }

    /// Opens `names`, creating those that are missing in a write transaction of its own: for
    /// the tables an open for writing needs before its writer takes jobs.
    /// Tables that exist are opened in a read transaction: an open writes nothing when they do.
    func create(_ names: [String], in environment: Environment) throws(EventStoreError) {
        let existing = try environment.transaction(readOnly: true, commit: true) { txn -> [String: MDB_dbi?] in
            var opened: [String: MDB_dbi?] = [:]
            for name in names {
                var dbi: MDB_dbi = 0
                let rc = mdb_dbi_open(txn.handle, TableRegistry.prefix + name, 0, &dbi)
                if rc == MDB_NOTFOUND { continue }
                guard rc == MDB_SUCCESS else { throw EventStoreError.lmdb(rc, "opening the table '\(name)'") }
                opened[name] = dbi
            }
            return opened
        }
        register(existing)
        let names = names.filter { existing[$0] == nil }
        guard !names.isEmpty else { return }
        let opened = try environment.transaction(readOnly: false, commit: true) { txn -> [String: MDB_dbi?] in
            var opened: [String: MDB_dbi?] = [:]
            for name in names {
                var dbi: MDB_dbi = 0
                let rc = mdb_dbi_open(txn.handle, TableRegistry.prefix + name, UInt32(MDB_CREATE), &dbi)
                guard rc == MDB_SUCCESS else { throw EventStoreError.lmdb(rc, "creating the table '\(name)'") }
                opened[name] = dbi
            }
            return opened
        }
        register(opened)
    }

    /// Opens the tables that exist among `names` in a read transaction (for a read-only store,
    /// where nothing can be created) and records the others as absent.
    func openExisting(_ names: [String], in environment: Environment) throws(EventStoreError) {
        try opening.withLock { _ throws(EventStoreError) in try openExistingAlone(names, in: environment) }
    }

    private func openExistingAlone(_ names: [String], in environment: Environment) throws(EventStoreError) {
        let opened = try environment.transaction(readOnly: true, commit: true) { txn -> [String: MDB_dbi?] in
            var opened: [String: MDB_dbi?] = [:]
            for name in names {
                var dbi: MDB_dbi = 0
                let rc = mdb_dbi_open(txn.handle, TableRegistry.prefix + name, 0, &dbi)
                if rc == MDB_NOTFOUND {
                    opened[name] = .some(nil)
                    continue
                }
                guard rc == MDB_SUCCESS else { throw EventStoreError.lmdb(rc, "opening the table '\(name)'") }
                opened[name] = dbi
            }
            return opened
        }
        register(opened)
    }
}

/// A write job that opens (creating when missing) the LMDB databases of some tables.
final class OpenTablesJob: WriteJob, @unchecked Sendable {
    // @unchecked Sendable: touched only by the writer thread after submission (see WriteJob).
    private let names: [String]
    private let registry: TableRegistry
    private let continuation: CheckedContinuation<Void, any Error>
    private var opened: [String: MDB_dbi?] = [:]
    let eventCount = 0

    init(names: [String], registry: TableRegistry, continuation: CheckedContinuation<Void, any Error>) {
        self.names = names
        self.registry = registry
        self.continuation = continuation
    }

    func run(in context: inout BatchContext) throws(JobFailure) {
        opened = [:]
        for name in names {
            var dbi: MDB_dbi = 0
            let rc = mdb_dbi_open(context.txn.handle, TableRegistry.prefix + name, UInt32(MDB_CREATE), &dbi)
            if rc == MDB_DBS_FULL {
                throw .poisoned(
                    EventStoreError(
                        .invalidInput,
                        "The store cannot hold more tables (at most \(Environment.maximumDatabases - 5)); use fewer tables.",
                        cause: .lmdb(code: rc, description: String(cString: mdb_strerror(rc)))))
            }
            guard rc == MDB_SUCCESS else { throw .transaction(.lmdb(rc, "opening the table '\(name)'")) }
            opened[name] = dbi
        }
    }

    func complete() {
        registry.register(opened)
        continuation.resume()
    }

    func fail(_ error: EventStoreError) { continuation.resume(throwing: error) }
}
