@_spi(Records) import EventStoreCore
import CLMDB
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The handles of the store's own named databases.
struct Databases {
    let meta: MDB_dbi
    let events: MDB_dbi
    let streams: MDB_dbi
    let streamIndex: MDB_dbi
    let eventIDs: MDB_dbi
    /// tag_index and type_index (DUPSORT): nil in a store written before them, opened
    /// read-only (queries then read the log itself); a store opened for writing gains them at open.
    var tagIndex: MDB_dbi?
    var typeIndex: MDB_dbi?
}

/// One open LMDB environment: the only place the store's files are opened, mapped, resized and
/// closed.
///
/// `@unchecked Sendable`: LMDB allows an environment to be used from many threads when it is
/// opened with `MDB_NOTLS` (read transactions are not tied to threads) and each write transaction
/// stays on one thread (the writer's). The mutable state here, the map size and whether the
/// environment is closed, is guarded by `gate`: every transaction runs under a shared hold of it,
/// and resizing or closing takes it exclusively, which is exactly LMDB's rule that
/// `mdb_env_set_mapsize` and `mdb_env_close` run with no transaction active in the process.
final class Environment: @unchecked Sendable {
    /// How many named databases an environment holds: the log's five and the tables.
    static let maximumDatabases: UInt32 = 128
    /// LMDB's main database, whose keys are the names of the named databases (always open).
    static let mainDatabase: MDB_dbi = 1

    let directory: StoreDirectory
    /// Whether LMDB opened the environment read-only (nothing is ever written to its data file).
    let isReadOnly: Bool
    /// Whether the environment was opened without LMDB's lock file (a read-only store whose lock
    /// file this process cannot use: safe only while no other process writes).
    private(set) var isUnlocked = false
    /// The store-wide format the `meta` table held at open (see ``Schema/formatVersion``).
    private(set) var storedFormat: UInt32 = Schema.formatVersion
    private let handle: OpaquePointer
    /// The store's upcasters, which every read of events through this environment applies.
    let upcasting: Upcasting
    private(set) var databases: Databases
    private let gate: UnsafeMutablePointer<pthread_rwlock_t>
    /// Guarded by `gate` (written only under the exclusive hold).
    private var isClosed = false
    /// The map's address range, once found (see `mappedRegion`), with the map size it was found for.
    private let mapped = Mutex<(start: UInt, length: Int, size: Int)?>(nil)
    /// Reset read transactions waiting to be renewed (see `read`).
    private let readers = Mutex<[PooledReader]>([])
    /// The reads that may suspend (see `readSuspending`), which hold no share of the gate.
    private let suspendingReads = SuspendingReads()
    /// The data file as opened, checked before each commit (nil when read-only or unreadable).
    private(set) var dataFile: DataFileIdentity?
    /// Bytes read by scans since the map's pages were last dropped (see ``noteScanned(bytes:)``).
    private let scannedSinceRelease = Mutex<Int>(0)

    /// A reset read transaction. `@unchecked Sendable`: with `MDB_NOTLS` a read transaction is
    /// not tied to a thread, and a pooled one is only ever used by the one caller that took it.
    private struct PooledReader: @unchecked Sendable {
        let handle: OpaquePointer
    }

    /// Opens the environment in `directory` (creating it when new, unless `readOnly`), checks the
    /// data file against what its meta page claims, and opens (or creates) the store's databases.
    init(directory: StoreDirectory, configuration: StoreConfiguration, upcasting: Upcasting, readOnly: Bool = false) throws(EventStoreError) {
        self.directory = directory
        self.upcasting = upcasting
        self.isReadOnly = readOnly
        gate = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if os(Linux)
        // Writer preference: a resize must not starve behind a stream of short readers.
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        pthread_rwlock_init(gate, &attributes)
        pthread_rwlockattr_destroy(&attributes)

        var flags = UInt32(MDB_NOTLS)
        switch configuration.durability {
        case .full: break
        case .noMetaSync: flags |= UInt32(MDB_NOMETASYNC)
        case .noSync: flags |= UInt32(MDB_NOSYNC)
        }
        if readOnly { flags |= UInt32(MDB_RDONLY) }
        let mapSize = max(configuration.initialMapSize, 1 << 20)
        do {
            try directory.allocateLockFile()
        } catch {
            Self.releaseGate(gate)
            throw error
        }
        var (opened, rc) = Self.open(directory.path, flags: flags, mapSize: mapSize)
        var unlocked = false
        if readOnly && (rc == EACCES || rc == EROFS || rc == EPERM) {
            // LMDB needs its lock file for reading too. When this process cannot open it (a
            // read-only directory without one, a lock file it may not write), read without it:
            // correct while no other process writes, as on read-only media or a backup.
            (opened, rc) = Self.open(directory.path, flags: flags | UInt32(MDB_NOLOCK), mapSize: mapSize)
            unlocked = true
        }
        guard rc == MDB_SUCCESS, let env = opened else {
            Self.releaseGate(gate)
            if rc == ENOENT || rc == EINVAL {
                throw EventStoreError(
                    .damaged,
                    "The data file in '\(directory.path)' is not a readable LMDB environment; restore it from a backup or choose another directory.",
                    cause: .lmdb(code: rc, description: String(cString: mdb_strerror(rc))))
            }
            if !readOnly && (rc == EACCES || rc == EROFS || rc == EPERM) && directory.isReadable() {
                throw EventStoreError(
                    .storeUnavailable,
                    "The store at '\(directory.path)' is read-only for this user; it can be read (esctl read, replay, export), not written.",
                    cause: .lmdb(code: rc, description: String(cString: mdb_strerror(rc))))
            }
            throw .lmdb(rc, "opening the store in '\(directory.path)'")
        }
        handle = env
        isUnlocked = unlocked
        if !readOnly { dataFile = DataFileIdentity(env: env, path: directory.path + "/" + StoreDirectory.dataFileName) }
        databases = Databases(meta: 0, events: 0, streams: 0, streamIndex: 0, eventIDs: 0, tagIndex: nil, typeIndex: nil)
        do throws(EventStoreError) {
            if !isUnlocked {
                var dead: Int32 = 0
                try Self.check(mdb_reader_check(env, &dead), "clearing stale readers")
            }
            try adoptLargerMapSize(configured: mapSize)
            try checkDataFileSize()
            databases = try openDatabases()
        } catch {
            // Every property is set, so deinit runs after this throw; it must find the
            // environment closed and only release the gate.
            mdb_env_close(env)
            isClosed = true
            throw error
        }
    }

    deinit {
        close()
        Self.releaseGate(gate)
    }

    private static func releaseGate(_ gate: UnsafeMutablePointer<pthread_rwlock_t>) {
        pthread_rwlock_destroy(gate)
        gate.deallocate()
    }

    /// Creates an environment handle and opens it on `path`; on failure the handle is closed
    /// again (LMDB allows no second `mdb_env_open` on a handle whose open failed).
    private static func open(_ path: String, flags: UInt32, mapSize: Int) -> (OpaquePointer?, Int32) {
        var env: OpaquePointer?
        var rc = mdb_env_create(&env)
        guard rc == MDB_SUCCESS, let env else { return (nil, rc) }
        rc = mdb_env_set_maxdbs(env, maximumDatabases)
        if rc == MDB_SUCCESS { rc = mdb_env_set_maxreaders(env, 1024) }
        if rc == MDB_SUCCESS { rc = mdb_env_set_mapsize(env, mapSize) }
        if rc == MDB_SUCCESS { rc = mdb_env_open(env, path, flags, 0o600) }
        guard rc == MDB_SUCCESS else {
            mdb_env_close(env)
            return (nil, rc)
        }
        return (env, rc)
    }

    @inline(__always)
    private static func check(_ rc: Int32, _ operation: String) throws(EventStoreError) {
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, operation) }
    }

    /// LMDB shrinks the map to the configured size (or the data in use) at open; a map that another
    /// run grew is kept instead, so the store does not have to grow again right away.
    private func adoptLargerMapSize(configured: Int) throws(EventStoreError) {
        try Self.check(mdb_env_set_mapsize(handle, 0), "reading the stored map size")
        var info = MDB_envinfo()
        try Self.check(mdb_env_info(handle, &info), "reading the environment's meta page")
        if info.me_mapsize < configured {
            try Self.check(mdb_env_set_mapsize(handle, configured), "setting the map size")
        }
    }

    /// LMDB maps the data file, so touching a page past the end of a truncated file would raise
    /// SIGBUS. The meta page says how many pages are in use; the file must hold them all.
    private func checkDataFileSize() throws(EventStoreError) {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        try Self.check(mdb_env_info(handle, &info), "reading the environment's meta page")
        try Self.check(mdb_env_stat(handle, &stat), "reading the environment's statistics")
        let needed = (info.me_last_pgno + 1) * Int(stat.ms_psize)
        let actual = try directory.dataFileSize()
        if actual < needed {
            throw EventStoreError(
                .damaged,
                "The data file in '\(directory.path)' is truncated (\(actual) bytes, its meta page needs \(needed)); restore it from a backup.")
        }
    }

    /// Opens the store's databases, creating them (and the format marker) in a new store. A store
    /// with another format, or an LMDB environment that is not an event store, is refused; so is
    /// an empty environment when the store is read-only (there is no store to read).
    private func openDatabases() throws(EventStoreError) -> Databases {
        // First without creating anything, so opening an existing store never waits for the write lock.
        let existing: Databases? = try transaction(readOnly: true, commit: true) { txn in
            try self.openAll(txn, create: false)
        }
        if let existing {
            guard existing.tagIndex == nil || existing.typeIndex == nil, !isReadOnly else { return existing }
            // A store written before the indexes gains them at its first open for writing.
            return try transaction(readOnly: false, commit: true) { txn in
                try QueryIndexes.create(in: txn, databases: existing)
            }
        }
        if isReadOnly { throw StoreDirectory.noStore(directory.path) }
        let created: Databases? = try transaction(readOnly: false, commit: true) { txn in
            try self.openAll(txn, create: true)
        }
        guard let created else {
            throw EventStoreError(.storageFailure, "The store's tables could not be created in '\(directory.path)'.")
        }
        return created
    }

    private func openAll(_ txn: Transaction, create: Bool) throws -> Databases? {
        var mainDB: MDB_dbi = 0
        try Self.check(mdb_dbi_open(txn.handle, nil, 0, &mainDB), "opening the main table")
        let isEmptyEnvironment = try txn.entryCount(mainDB) == 0
        if isEmptyEnvironment {
            // A new environment holds its two meta pages and nothing else. One whose main table
            // looks empty while its file holds more has a damaged main table: never take it for a
            // new store (and write a new one over it).
            var info = MDB_envinfo()
            try Self.check(mdb_env_info(handle, &info), "reading the environment's meta page")
            if info.me_last_pgno > 1 {
                throw EventStoreError(
                    .damaged,
                    "The data file in '\(directory.path)' holds \(info.me_last_pgno + 1) pages but its main table reads as empty: it is damaged; restore it from a backup.")
            }
        }
        func open(_ name: String) throws -> MDB_dbi? {
            var dbi: MDB_dbi = 0
            let rc = mdb_dbi_open(txn.handle, name, create ? UInt32(MDB_CREATE) : 0, &dbi)
            if rc == MDB_NOTFOUND { return nil }
            if rc == MDB_INCOMPATIBLE {
                throw EventStoreError(
                    .storeUnavailable,
                    "The directory '\(directory.path)' holds an LMDB environment that is not an event store; choose another directory.")
            }
            try Self.check(rc, "opening the table '\(name)'")
            return dbi
        }
        guard let meta = try open(Schema.meta) else {
            if !isEmptyEnvironment {
                throw EventStoreError(
                    .storeUnavailable,
                    "The directory '\(directory.path)' holds an LMDB environment that is not an event store; choose another directory.")
            }
            return nil
        }
        let format: UInt32? = try Schema.formatKey.utf8CString.withUnsafeBytes { key in
            let keyBytes = UnsafeRawBufferPointer(rebasing: key.dropLast())
            guard let value = try txn.get(meta, keyBytes) else { return nil }
            guard value.count == 4 else { return UInt32.max }
            return BigEndian.uint32(value)
        }
        switch format {
        case let known? where Schema.readableFormats.contains(known):
            storedFormat = known
        case nil where !isEmptyEnvironment:
            // The marker is written with the store's tables, in one transaction: a store that has
            // tables and no marker is damaged (the page that held it, most likely).
            throw EventStoreError(
                .damaged,
                "The store in '\(directory.path)' has lost its format marker: its data file is damaged; restore it from a backup.")
        case nil where create:
            try Schema.formatKey.utf8CString.withUnsafeBytes { key in
                let keyBytes = UnsafeRawBufferPointer(rebasing: key.dropLast())
                _ = try withUnsafeBytes(of: Schema.formatVersion.bigEndian) { value in
                    try txn.put(meta, keyBytes, value)
                }
            }
        case nil:
            return nil
        case let other?:
            throw EventStoreError(
                .storeUnavailable,
                "The store in '\(directory.path)' has format \(other), and this version reads formats \(Schema.readableFormats.lowerBound) to \(Schema.readableFormats.upperBound); use a newer version of esctl.")
        }
        // A store's tables are created in one transaction with its format marker: a store that has
        // the marker and lacks one of them is damaged (its main table, most likely), not new.
        func table(_ name: String) throws -> MDB_dbi {
            guard let dbi = try open(name) else {
                throw EventStoreError(
                    .damaged,
                    "The store in '\(directory.path)' lacks its table '\(name)': its data file is damaged; restore it from a backup.")
            }
            return dbi
        }
        let events = try table(Schema.events)
        let streams = try table(Schema.streams)
        let streamIndex = try table(Schema.streamIndex)
        let eventIDs = try table(Schema.eventIDs)
        var databases = Databases(meta: meta, events: events, streams: streams, streamIndex: streamIndex, eventIDs: eventIDs)
        if create && isEmptyEnvironment {
            databases = try QueryIndexes.create(in: txn, databases: databases)
        } else {
            databases.tagIndex = try QueryIndexes.open(Schema.tagIndex, in: txn)
            databases.typeIndex = try QueryIndexes.open(Schema.typeIndex, in: txn)
        }
        return databases
    }

    /// Runs `body` in a transaction under a shared hold of the gate. Read transactions are always
    /// aborted unless `commit` is set (needed to keep table handles opened in them); write
    /// transactions are committed when `body` returns and aborted when it throws.
    ///
    /// Must not be nested: a thread never holds the gate twice.
    func transaction<R>(
        readOnly: Bool, commit: Bool = true, _ body: (Transaction) throws -> R
    ) throws(EventStoreError) -> R {
        // Every write, the writer's and the table registry's, goes to the file the store opened.
        if !readOnly, let gone = dataFile?.check() { throw gone }
        return try withTransaction(
            readOnly ? "a read" : "a write",
            begin: { () -> (Int32, OpaquePointer?) in
                var txn: OpaquePointer?
                let rc = mdb_txn_begin(handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
                return (rc, txn)
            },
            end: { (txn: OpaquePointer, succeeded: Bool) throws(EventStoreError) in
                guard succeeded, !readOnly || commit else {
                    mdb_txn_abort(txn)
                    return
                }
                let rc = mdb_txn_commit(txn)
                guard rc == MDB_SUCCESS else {
                    // LMDB reports a short write as EIO; a full disk or a file size limit is the
                    // usual reason, and the only one the user can act on.
                    if rc == EIO && (directory.isNearlyFull() || directory.isAtFileSizeLimit()) {
                        throw .lmdb(ENOSPC, "committing")
                    }
                    throw .lmdb(rc, "committing")
                }
            }, body)
    }

    /// Runs a read-only transaction.
    @inline(__always)
    func read<R>(_ body: (Transaction) throws -> R) throws(EventStoreError) -> R {
        try withTransaction("a read", begin: beginPooledRead, end: { txn, _ in endPooledRead(txn) }, body)
    }

    /// Begins a read transaction, renewing a pooled one when there is one: a reset read
    /// transaction keeps its reader slot, and renewing it is much cheaper than beginning anew.
    private func beginPooledRead() -> (Int32, OpaquePointer?) {
        if let pooled = readers.withLock({ $0.popLast() })?.handle {
            let rc = mdb_txn_renew(pooled)
            if rc == MDB_SUCCESS { return (rc, pooled) }
            mdb_txn_abort(pooled)
            if rc == MDB_MAP_RESIZED { return (rc, nil) }
        }
        var txn: OpaquePointer?
        let rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
        return (rc, txn)
    }

    /// Ends a read transaction, keeping it for reuse when the pool has room.
    private func endPooledRead(_ txn: OpaquePointer) {
        mdb_txn_reset(txn)
        let pooled = PooledReader(handle: txn)
        let kept = readers.withLock { readers -> Bool in
            guard readers.count < Self.pooledReaders else { return false }
            readers.append(pooled)
            return true
        }
        if !kept { mdb_txn_abort(txn) }
    }

    /// Runs `body` in a read transaction that may suspend: it may resume on another thread, which
    /// `MDB_NOTLS` allows a read transaction. It holds no share of the gate while `body` runs
    /// (a lock is released by the thread that took it); instead it is counted, and resizing and
    /// closing, which take the gate exclusively, wait until no such read runs.
    func readSuspending<R>(_ body: (Transaction) async throws -> R) async throws -> R {
        let txn = try beginSuspendingRead()
        defer { suspendingReads.end { endPooledRead(txn) } }
        return try await body(Transaction(handle: txn))
    }

    private func beginSuspendingRead() throws(EventStoreError) -> OpaquePointer {
        let txn = try startHoldingGate("a read", begin: beginPooledRead)
        // Counted under the shared hold: an exclusive holder either ran before this (and is
        // done) or waits for this read to end.
        suspendingReads.begin()
        pthread_rwlock_unlock(gate)
        return txn
    }

    /// Takes a shared hold of the gate and starts a transaction with `begin`, again after
    /// adopting a larger map when another process grew it; returns it with the gate still held
    /// (the caller releases it). Throws with the gate released.
    private func startHoldingGate(_ what: String, begin: () -> (Int32, OpaquePointer?)) throws(EventStoreError) -> OpaquePointer {
        while true {
            pthread_rwlock_rdlock(gate)
            if isClosed {
                pthread_rwlock_unlock(gate)
                throw EventStoreError.closedStore
            }
            let (rc, started) = begin()
            if rc == MDB_MAP_RESIZED {
                pthread_rwlock_unlock(gate)
                try adoptMapSize()
                continue
            }
            guard rc == MDB_SUCCESS, let txn = started else {
                pthread_rwlock_unlock(gate)
                throw .lmdb(rc, "starting \(what)")
            }
            return txn
        }
    }

    /// The one way a transaction is run: under a shared hold of the gate (so the map cannot
    /// change under it), started by `begin` again after adopting a larger map when another
    /// process grew it, with `body` marked as inside a transaction, and finished by `end` (told
    /// whether `body` returned) before the gate is released.
    @inline(__always)
    private func withTransaction<R>(
        _ what: String, begin: () -> (Int32, OpaquePointer?), end: (OpaquePointer, Bool) throws(EventStoreError) -> Void,
        _ body: (Transaction) throws -> R
    ) throws(EventStoreError) -> R {
        try ReentrancyWatchdog.check(what)
        let txn = try startHoldingGate(what, begin: begin)
        defer { pthread_rwlock_unlock(gate) }
        let result: R
        do {
            result = try ReentrancyWatchdog.inside { try body(Transaction(handle: txn)) }
        } catch {
            try end(txn, false)
            throw EventStoreError.wrapping(error)
        }
        try end(txn, true)
        return result
    }

    /// How many reset read transactions are kept for reuse.
    private static let pooledReaders = 32

    /// Ends the pooled read transactions. Called under the exclusive hold of the gate.
    private func drainReaders() {
        for reader in readers.withLock({ readers -> [PooledReader] in
            defer { readers.removeAll() }
            return readers
        }) {
            mdb_txn_abort(reader.handle)
        }
    }

    /// Adopts a larger map made by another process (after `MDB_MAP_RESIZED`).
    func adoptMapSize() throws(EventStoreError) {
        pthread_rwlock_wrlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        if isClosed { throw EventStoreError.closedStore }
        suspendingReads.waitUntilNone()
        drainReaders()
        try Self.check(mdb_env_set_mapsize(handle, 0), "adopting another process's map size")
    }

    /// Clears the reader slots of processes that died holding a read (`mdb_reader_check`): a dead
    /// reader's snapshot keeps LMDB from reusing the pages it may see, so the file grows instead.
    /// Returns how many slots it cleared.
    @discardableResult
    func clearStaleReaders() throws(EventStoreError) -> Int {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        if isClosed { throw EventStoreError.closedStore }
        guard !isUnlocked else { return 0 }
        var dead: Int32 = 0
        try Self.check(mdb_reader_check(handle, &dead), "clearing stale readers")
        return Int(dead)
    }

    /// Doubles the map (after `MDB_MAP_FULL`) and returns its new size. Waits for running reads to
    /// end first. Clears stale readers before: their snapshots may be what filled it.
    @discardableResult
    func growMap() throws(EventStoreError) -> Int {
        try clearStaleReaders()
        pthread_rwlock_wrlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        if isClosed { throw EventStoreError.closedStore }
        var info = MDB_envinfo()
        try Self.check(mdb_env_info(handle, &info), "reading the map size")
        suspendingReads.waitUntilNone()
        drainReaders()
        let (doubled, overflow) = info.me_mapsize.multipliedReportingOverflow(by: 2)
        guard !overflow else {
            throw EventStoreError(.storageFull, "The store's map cannot grow any further.")
        }
        let rc = mdb_env_set_mapsize(handle, doubled)
        if rc == ENOMEM {
            throw EventStoreError(
                .storageFull, "The store's map cannot grow to \(doubled) bytes: out of address space.",
                cause: .lmdb(code: rc, description: String(cString: mdb_strerror(rc))))
        }
        try Self.check(rc, "growing the map to \(doubled) bytes")
        return doubled
    }

    /// Drops the map's pages from this process's page tables (they stay in the page cache). Safe
    /// with readers running: the map is a shared read-only file mapping, so a page read again is
    /// faulted back in from the cache.
    func releaseMappedPages() {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        guard !isClosed else { return }
        releaseMappedPagesHoldingGate()
    }

    /// Counts bytes that a scan outside the writer read (a subscription catching up page by
    /// page) and drops the map's pages after every 16 MiB of them: with no commits to do it,
    /// a reader walking the whole log would otherwise keep all of it resident. Call it outside
    /// a read transaction.
    func noteScanned(bytes: Int) {
        if scanReleaseDue(bytes) { releaseMappedPages() }
    }

    private static let scanReleaseBytes = 16 << 20

    /// Adds `bytes` to what scans read since the map's pages were last dropped; true (and the
    /// count restarted) when that reaches ``scanReleaseBytes``.
    private func scanReleaseDue(_ bytes: Int) -> Bool {
        scannedSinceRelease.withLock { total -> Bool in
            total &+= bytes
            guard total >= Self.scanReleaseBytes else { return false }
            total = 0
            return true
        }
    }

    /// The same, for a caller inside a transaction (which already holds the gate).
    func releaseMappedPagesHoldingGate() {
        #if os(Linux)
        guard let region = mappedRegion() else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: region.start), region.length, Int32(MADV_DONTNEED))
        #endif
    }

    /// Drops only the map's pages between two addresses a caller inside a transaction read
    /// (clamped to the map, widened to whole pages): a scan lets go of what it walked without
    /// taking from other readers the pages they are using (each would fault them in again).
    /// The pages it reads beside the records (the tree's branches, rows looked up) are dropped
    /// with the whole map once the scans of the store have read 16 MiB since the last drop.
    func releaseMappedPagesHoldingGate(from low: UInt, through high: UInt) {
        #if os(Linux)
        guard let region = mappedRegion(), high >= low else { return }
        let page = UInt(Self.pageSize)
        let start = max(low, region.start) & ~(page - 1)
        let end = min(high, region.start + UInt(region.length) - 1) | (page - 1)
        guard end > start else { return }
        if scanReleaseDue(Int(end - start + 1)) {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: region.start), region.length, Int32(MADV_DONTNEED))
        } else {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: start), Int(end - start + 1), Int32(MADV_DONTNEED))
        }
        #endif
    }

    /// The system's page size (4 KiB where it cannot be read).
    private static let pageSize: Int = {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : 4096
    }()

    /// Where LMDB mapped the data file, read from /proc/self/maps (LMDB does not say: its
    /// `me_mapaddr` is only the fixed address it was asked for). Found again after every resize,
    /// since resizing maps the file anew.
    private func mappedRegion() -> (start: UInt, length: Int)? {
        var info = MDB_envinfo()
        guard mdb_env_info(handle, &info) == MDB_SUCCESS else { return nil }
        if let known = mapped.withLock({ $0 }), known.size == info.me_mapsize { return (known.start, known.length) }
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
        let dataPath = directory.path + "/" + StoreDirectory.dataFileName
        let dataInode = (try? FileManager.default.attributesOfItem(atPath: dataPath)[.systemFileNumber] as? NSNumber)?.uint64Value
        for line in maps.split(separator: "\n") where line.hasSuffix("/" + StoreDirectory.dataFileName) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, UInt64(fields[4]) == dataInode else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16), end > start else { continue }
            // The mapping spans the whole map size; anything else is another mapping of the file.
            guard Int(end - start) == info.me_mapsize else { continue }
            mapped.withLock { $0 = (start, Int(end - start), info.me_mapsize) }
            return (start, Int(end - start))
        }
        return nil
    }

    /// Copies the environment's data file into `descriptor` (an empty file) from one read snapshot.
    func copy(to descriptor: Int32, compact: Bool) throws(EventStoreError) {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        if isClosed { throw EventStoreError.closedStore }
        try Self.check(mdb_env_copyfd2(handle, descriptor, compact ? UInt32(MDB_CP_COMPACT) : 0), "copying the store")
    }

    /// The process id of each reader slot of the lock file in use (dead processes' included).
    func readerSlotsInUse() throws(EventStoreError) -> [Int32] {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        if isClosed { throw EventStoreError.closedStore }
        guard !isUnlocked else { return [] }
        let counter = ReaderCounter()
        let rc = withExtendedLifetime(counter) {
            mdb_reader_list(handle, { line, context in
                guard let line, let context else { return 0 }
                // One line a slot: "PID THREAD TXNID", after a header line ("pid thread txnid");
                // "(no active readers)" when there are none.
                if let first = String(cString: line).split(separator: " ").first, let pid = Int32(first) {
                    Unmanaged<ReaderCounter>.fromOpaque(context).takeUnretainedValue().pids.append(pid)
                }
                return 0
            }, Unmanaged.passUnretained(counter).toOpaque())
        }
        guard rc >= 0 else { throw .lmdb(rc, "listing the store's readers") }
        return counter.pids
    }

    /// The environment's current information (map size, last page, last transaction id).
    func info() throws(EventStoreError) -> MDB_envinfo {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        if isClosed { throw EventStoreError.closedStore }
        var info = MDB_envinfo()
        try Self.check(mdb_env_info(handle, &info), "reading the environment's information")
        return info
    }

    /// The page size of the environment.
    func pageSize() throws(EventStoreError) -> Int {
        pthread_rwlock_rdlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        if isClosed { throw EventStoreError.closedStore }
        var stat = MDB_stat()
        try Self.check(mdb_env_stat(handle, &stat), "reading the environment's statistics")
        return Int(stat.ms_psize)
    }

    /// Closes the environment once running transactions have ended. Idempotent. Must not be
    /// called from inside a transaction (it would wait for itself): `close()` checks.
    func close() {
        pthread_rwlock_wrlock(gate)
        defer { pthread_rwlock_unlock(gate) }
        if isClosed { return }
        isClosed = true
        suspendingReads.waitUntilNone()
        drainReaders()
        mdb_env_close(handle)
    }
}

/// The count `mdb_reader_list`'s callback adds to (a class, to pass through its context pointer).
private final class ReaderCounter {
    var pids: [Int32] = []
}

/// The count of read transactions running without a share of the gate (see
/// `Environment.readSuspending`), and a wait for it to reach zero.
private final class SuspendingReads: @unchecked Sendable {
    // @unchecked Sendable: `count` is touched only under `condition`'s lock.
    private let condition = NSCondition()
    private var count = 0

    func begin() {
        condition.lock()
        count += 1
        condition.unlock()
    }

    /// Runs `finish` (which ends the transaction), then counts the read as ended.
    func end(_ finish: () -> Void) {
        finish()
        condition.lock()
        count -= 1
        if count == 0 { condition.broadcast() }
        condition.unlock()
    }

    func waitUntilNone() {
        condition.lock()
        while count > 0 { condition.wait() }
        condition.unlock()
    }
}
