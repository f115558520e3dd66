@_spi(Records) import EventStoreCore
import CLMDB
import Foundation
import Synchronization

/// A rebuild's scratch tables on LMDB: an environment of their own in the directory
/// `<store>/rebuild-scratch-<the projection's name in hex>` (hex: a name may be `..`; a directory
/// each, not under a shared parent, so that lanes ending and starting at once race on nothing), opened `MDB_NOSYNC` (nothing is flushed: a crash may
/// lose or damage it, and a rebuild whose process died starts its fold again, so nothing is lost
/// that the store needs) and `MDB_NOLOCK` (one lane of one process uses it, one call at a time,
/// so LMDB's locks would guard nothing; every transaction begins and ends within one call).
///
/// `@unchecked Sendable`: every call takes `lock`, so the environment and its handles are
/// touched by one thread at a time, whichever it is.
final class LMDBScratchTables: ScratchTables, @unchecked Sendable {
    /// How the name of a projection's scratch directory in the store's directory begins.
    static let directoryPrefix = "rebuild-scratch-"
    /// The table the fold's checkpoint is kept in.
    private static let checkpointTable = "_checkpoint"
    private static let checkpointKey: [UInt8] = [0]

    private let lock = Mutex<Void>(())
    private let path: String
    private var environment: OpaquePointer?
    private var mapSize: Int
    /// Handles of the tables created so far (a handle is valid once its transaction committed).
    private var handles: [String: MDB_dbi] = [:]

    /// Makes empty scratch tables for `projection` in the store at `storePath`, removing what
    /// was there. Throws ``EventStoreError`` (storeUnavailable) when the directory or the
    /// environment cannot be made.
    init(storePath: String, projection: String, mapSize: Int) throws(EventStoreError) {
        path = storePath + "/" + Self.directoryPrefix + Self.directoryName(of: projection)
        self.mapSize = max(mapSize, 1 << 26)
        // What a process that died left: removed, or refused (never reopened as if new).
        if FileManager.default.fileExists(atPath: path) {
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw EventStoreError(
                    .storeUnavailable, "The scratch directory '\(path)' a rebuild left cannot be removed; remove it, then rebuild again.",
                    cause: .system(errno: Self.errorNumber(error), description: "\(error)"))
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw EventStoreError(
                .storeUnavailable, "The scratch directory '\(path)' of a rebuild cannot be made; check the store directory's permissions and free space.",
                cause: .system(errno: Self.errorNumber(error), description: "\(error)"))
        }
        var opened: OpaquePointer?
        var rc = mdb_env_create(&opened)
        if rc == MDB_SUCCESS, let opened {
            rc = mdb_env_set_maxdbs(opened, 1024)
            if rc == MDB_SUCCESS { rc = mdb_env_set_mapsize(opened, self.mapSize) }
            if rc == MDB_SUCCESS { rc = mdb_env_open(opened, path, UInt32(MDB_NOSYNC | MDB_NOMETASYNC | MDB_NOLOCK | MDB_NOTLS), 0o600) }
            if rc != MDB_SUCCESS { mdb_env_close(opened) }
        }
        guard rc == MDB_SUCCESS, let opened else {
            try? FileManager.default.removeItem(atPath: path)
            throw EventStoreError(
                .storeUnavailable, "The scratch tables of a rebuild cannot be opened in '\(path)'; check the free space.",
                cause: .lmdb(code: rc, description: String(cString: mdb_strerror(rc))))
        }
        environment = opened
    }

    deinit { remove() }

    /// The system's error number under a file operation's error (0 when it names none).
    private static func errorNumber(_ error: any Error) -> Int32 {
        Int32(truncatingIfNeeded: ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code ?? 0)
    }

    /// The end of a projection's scratch directory's name: its name's UTF-8 bytes in hex (at most 200
    /// characters for the 100 bytes a name may have), so no name is a path of its own.
    static func directoryName(of projection: String) -> String {
        HexText.lowercase(projection.utf8)
    }

    func value(_ table: String, _ key: [UInt8]) throws -> [UInt8]? {
        try lock.withLock { _ throws -> [UInt8]? in
            guard let dbi = handles[table] else { return nil }
            return try read { txn in
                try key.withUnsafeBytes { keyBytes in try txn.get(dbi, keyBytes).map { Array($0) } }
            }
        }
    }

    func checkpoint() throws -> [UInt8]? {
        try value(Self.checkpointTable, Self.checkpointKey)
    }

    func commit(_ changes: [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])], checkpoint: [UInt8]) throws {
        try lock.withLock { _ throws in
            // A full map aborts the transaction: it grows, and the batch is written again (the
            // changes are all in memory).
            while true {
                do {
                    try write(changes + [(Self.checkpointTable, [(Self.checkpointKey, checkpoint)])])
                    return
                } catch let error as EventStoreError where error.lmdbCode == MDB_MAP_FULL {
                    try grow()
                }
            }
        }
    }

    func rows(_ table: String, after: [UInt8]?, maximumBytes: Int) throws -> [(key: [UInt8], value: [UInt8])] {
        try lock.withLock { _ throws -> [(key: [UInt8], value: [UInt8])] in
            guard let dbi = handles[table] else { return [] }
            return try read { txn in
                let cursor = try txn.cursor(dbi)
                var entry: Cursor.Entry?
                if let after {
                    entry = try after.withUnsafeBytes { bytes in try cursor.seek(atLeast: bytes) }
                    if let (key, _) = entry, key.elementsEqual(after) { entry = try cursor.next() }
                } else {
                    entry = try cursor.first()
                }
                var rows: [(key: [UInt8], value: [UInt8])] = []
                var bytes = 0
                while let (key, value) = entry {
                    rows.append((Array(key), Array(value)))
                    bytes += key.count + value.count
                    if bytes >= maximumBytes { break }
                    entry = try cursor.next()
                }
                return rows
            }
        }
    }

    func remove() {
        lock.withLock { _ in
            if let environment { mdb_env_close(environment) }
            environment = nil
            handles = [:]
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    // MARK: Under the lock

    private func handle() throws(EventStoreError) -> OpaquePointer {
        guard let environment else { throw EventStoreError(.closed, "The scratch tables of a rebuild were removed; start the rebuild again.") }
        return environment
    }

    private func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        var txn: OpaquePointer?
        let rc = mdb_txn_begin(try handle(), nil, UInt32(MDB_RDONLY), &txn)
        guard rc == MDB_SUCCESS, let txn else { throw EventStoreError.lmdb(rc, "reading a rebuild's scratch tables") }
        defer { mdb_txn_abort(txn) }
        return try body(Transaction(handle: txn))
    }

    private func write(_ changes: [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])]) throws {
        var started: OpaquePointer?
        var rc = mdb_txn_begin(try handle(), nil, 0, &started)
        guard rc == MDB_SUCCESS, let started else { throw EventStoreError.lmdb(rc, "writing a rebuild's scratch tables") }
        let txn = Transaction(handle: started)
        var created: [String: MDB_dbi] = [:]
        do {
            for (table, rows) in changes {
                let dbi: MDB_dbi
                if let known = handles[table] ?? created[table] {
                    dbi = known
                } else {
                    var opened: MDB_dbi = 0
                    let rc = mdb_dbi_open(started, table, UInt32(MDB_CREATE), &opened)
                    guard rc == MDB_SUCCESS else { throw EventStoreError.lmdb(rc, "making a rebuild's scratch table") }
                    created[table] = opened
                    dbi = opened
                }
                // In key order: the pages each batch touches are walked once, left to right.
                for (key, value) in rows.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                    try key.withUnsafeBytes { keyBytes in
                        if let value {
                            try value.withUnsafeBytes { valueBytes in _ = try txn.put(dbi, keyBytes, valueBytes) }
                        } else {
                            _ = try txn.delete(dbi, keyBytes)
                        }
                    }
                }
            }
        } catch {
            mdb_txn_abort(started)
            throw error
        }
        rc = mdb_txn_commit(started)
        guard rc == MDB_SUCCESS else { throw EventStoreError.lmdb(rc, "committing a rebuild's scratch tables") }
        handles.merge(created) { old, _ in old }
    }

    private func grow() throws(EventStoreError) {
        let (doubled, overflow) = mapSize.multipliedReportingOverflow(by: 2)
        guard !overflow else { throw .lmdb(MDB_MAP_FULL, "growing a rebuild's scratch tables") }
        let rc = mdb_env_set_mapsize(try handle(), doubled)
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "growing a rebuild's scratch tables") }
        mapSize = doubled
    }
}

extension EventStore: LogScratchTables {
    public func scratchTables(for projection: String) async throws -> any ScratchTables {
        try LMDBScratchTables(storePath: path, projection: projection, mapSize: configuration.initialMapSize)
    }
}
