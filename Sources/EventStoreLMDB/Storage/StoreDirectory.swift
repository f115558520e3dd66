@_spi(Records) import EventStoreCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The directory that holds a store: created when missing (when the open mode allows), checked
/// before LMDB sees it, and
/// claimed for this process so that it is never opened twice at once (LMDB forbids that: a second
/// environment on the same files breaks its locking).
struct StoreDirectory: Hashable {
    /// Identifies a directory however it is named (relative path, symbolic link, bind mount).
    struct Identity: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    let path: String
    let identity: Identity
    /// What `prepare` found missing and LMDB will create: removed again when opening fails, so a
    /// failed creation leaves nothing behind.
    var createsDirectory = false
    var createsDataFile = false
    var createsLockFile = false

    static let dataFileName = "data.mdb"
    static let lockFileName = "lock.mdb"

    /// Checks that `path` can hold a store opened in `mode`: a directory that is either empty or
    /// holds an LMDB data file that is not empty. With ``OpenMode/createIfMissing`` a missing
    /// directory is created (mode 0700); with the other modes a path without a data file is
    /// ``EventStoreError/Code/notFound`` and nothing is created. A read-only open needs only
    /// read access.
    static func prepare(_ path: String, mode: OpenMode) throws(EventStoreError) -> StoreDirectory {
        if path.isEmpty {
            throw EventStoreError(.invalidInput, "The store path is empty; give a directory.")
        }
        var info = stat()
        var createdDirectory = false
        if stat(path, &info) != 0 {
            guard errno == ENOENT else { throw .system("checking the store directory '\(path)'") }
            guard mode == .createIfMissing else { throw noStore(path) }
            if mkdir(path, 0o700) != 0 {
                guard errno == EEXIST else { throw .system("creating the store directory '\(path)'") }
            } else {
                createdDirectory = true
            }
            guard stat(path, &info) == 0 else { throw .system("checking the store directory '\(path)'") }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw EventStoreError(
                .storeUnavailable, "The store path '\(path)' is a file, not a directory; give a directory.")
        }
        let needed = mode == .readOnly ? R_OK | X_OK : R_OK | W_OK | X_OK
        guard access(path, needed) == 0 else {
            let refused = errno
            if mode != .readOnly && access(path, R_OK | X_OK) == 0 && hasDataFile(path) {
                throw EventStoreError(
                    .storeUnavailable,
                    "The store at '\(path)' is read-only for this user; it can be read (esctl read, replay, export), not written.",
                    cause: .system(errno: refused, description: String(cString: strerror(refused))))
            }
            throw EventStoreError(
                .storeUnavailable,
                mode == .readOnly
                    ? "The store directory '\(path)' cannot be read; fix its permissions or choose another."
                    : "The store directory '\(path)' cannot be read and written; fix its permissions or choose another.")
        }
        let identity = Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        let dataPath = path + "/" + dataFileName
        var dataInfo = stat()
        if lstat(dataPath, &dataInfo) != 0 {
            // No data file: no store to open; only an open that creates one asks whether it may.
            guard mode == .createIfMissing else { throw noStore(path) }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            // (A data file listed here appeared since the check above: another process is
            // creating the store at this moment, which LMDB's own locking serializes.)
            let foreign = entries.filter { $0 != lockFileName && $0 != dataFileName }
            if !foreign.isEmpty {
                throw EventStoreError(
                    .storeUnavailable,
                    "The directory '\(path)' holds other files and no event store; give an empty or new directory.")
            }
        } else {
            try checkDataFile(dataInfo, path: path, identity: identity)
        }
        var directory = StoreDirectory(path: path, identity: identity)
        directory.createsDirectory = createdDirectory
        directory.createsDataFile = access(dataPath, F_OK) != 0
        directory.createsLockFile = access(path + "/" + lockFileName, F_OK) != 0
        return directory
    }

    /// How many bytes LMDB's lock file holds for this store's 1,024 readers: a 192-byte header and
    /// 64 bytes a reader slot after the first (`MDB_txninfo`, `MDB_reader` in `mdb.c`).
    static let lockFileBytes = 192 + 1023 * 64

    /// Gives LMDB's lock file its pages before LMDB maps it. LMDB sizes the file with `ftruncate`,
    /// which leaves it sparse, and writes its reader table through the map: on a full disk, the
    /// first write to a page that does not exist yet is a SIGBUS, not an error. Allocated here, a
    /// full disk is a clear error before anything is mapped. Does nothing where the file cannot
    /// be written (a read-only store) or the file system cannot allocate ahead.
    ///
    /// Call it before LMDB opens the environment in this process: the descriptor it closes would
    /// otherwise drop LMDB's own locks on the file.
    func allocateLockFile() throws(EventStoreError) {
        let descriptor = open(path + "/" + Self.lockFileName, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        #if os(Linux)
        let rc = posix_fallocate(descriptor, 0, off_t(Self.lockFileBytes))
        if rc == ENOSPC || rc == EDQUOT || rc == EFBIG {
            throw EventStoreError(
                .storageFull,
                "The disk is full: the store's lock file needs \(Self.lockFileBytes / 1024) KiB; free some space and try again.",
                cause: .system(errno: rc, description: String(cString: strerror(rc))))
        }
        #endif
    }

    /// Removes what opening created before it failed: the files LMDB made, and the directory when
    /// it was new. What was there before stays, and so does everything when another process has
    /// the store open meanwhile (it may have created the same files at the same moment): LMDB
    /// holds a lock on its lock file's first byte in every process that has it open.
    func removeCreated() {
        guard createsDataFile || createsLockFile || createsDirectory else { return }
        let lockPath = path + "/" + Self.lockFileName
        let descriptor = open(lockPath, O_RDWR | O_CLOEXEC)
        if descriptor >= 0 {
            defer { close(descriptor) }
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = 0
            lock.l_len = 1
            guard fcntl(descriptor, F_SETLK, &lock) == 0 else { return }
        }
        var info = stat()
        let dataPath = path + "/" + Self.dataFileName
        // A new environment holds its two meta pages at most: never remove a file with a log in it.
        if createsDataFile, stat(dataPath, &info) == 0, info.st_size <= 2 * 65_536 { unlink(dataPath) }
        if createsLockFile { unlink(lockPath) }
        if createsDirectory { rmdir(path) }
    }

    /// The error for a path that holds no store, when opening must not create one.
    static func noStore(_ path: String) -> EventStoreError {
        EventStoreError(.notFound, "There is no event store at '\(path)'.")
    }

    private static func hasDataFile(_ path: String) -> Bool {
        access(path + "/" + dataFileName, F_OK) == 0
    }

    /// A data file must be a regular file with something in it: LMDB would take an empty one
    /// (what a crash during a copy leaves) for a new store and start the log again, and would
    /// block on a FIFO or map a device.
    private static func checkDataFile(_ info: stat, path: String, identity: Identity) throws(EventStoreError) {
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw EventStoreError(
                .storeUnavailable,
                "The data file '\(path)/\(dataFileName)' is not a regular file; move it away and restore the store from a backup.")
        }
        guard info.st_size > 0 else {
            // Another process may be creating the store right now: LMDB holds its lock file's
            // exclusive lock while it writes a new data file's first pages. Wait for that, then
            // look again; an empty file that stays empty is damage.
            // (Not when this process has the store open: closing a descriptor of its lock file
            // would drop LMDB's own locks, and an open store's data file is never empty anyway.)
            if !OpenDirectories.isClaimed(identity) { waitForCreator(path) }
            var again = stat()
            if stat(path + "/" + dataFileName, &again) == 0, again.st_size > 0 { return }
            throw EventStoreError(
                .damaged,
                "The data file '\(path)/\(dataFileName)' is empty (a crash during a copy leaves one); restore the store from a backup, or remove the directory to start afresh.")
        }
    }

    /// Waits until no process holds LMDB's exclusive lock on the store (byte 0 of the lock
    /// file, held while an environment is created), by taking and releasing a shared lock on
    /// it. Returns at once when there is no lock file or it cannot be opened.
    private static func waitForCreator(_ path: String) {
        let descriptor = open(path + "/" + lockFileName, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        // Closing the descriptor releases the lock; LMDB has not opened the file in this process
        // yet, so none of its own locks go with it.
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        while fcntl(descriptor, F_SETLKW, &lock) != 0 && errno == EINTR {}
    }

    /// Whether this process may read the data file (a store it cannot write may still be read).
    func isReadable() -> Bool {
        access(path + "/" + Self.dataFileName, R_OK) == 0 && access(path, R_OK | X_OK) == 0
    }

    /// The size of the data file in bytes.
    func dataFileSize() throws(EventStoreError) -> Int {
        var info = stat()
        guard stat(path + "/" + Self.dataFileName, &info) == 0 else {
            throw .system("reading the size of the data file")
        }
        return Int(info.st_size)
    }

    /// Whether the file system holding the directory has almost no space left for unprivileged
    /// writers; `false` when that cannot be told.
    func isNearlyFull() -> Bool {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return false }
        let free = UInt64(info.f_bavail) * UInt64(info.f_frsize)
        return free < Self.nearlyFullBytes
    }

    /// Whether the data file has grown to this process's file size limit (`ulimit -f`), which a
    /// write that straddles the limit reaches before it stops short.
    func isAtFileSizeLimit() -> Bool {
        var limit = rlimit()
        #if os(Linux)
        let resource = Int32(RLIMIT_FSIZE.rawValue)
        #else
        let resource = RLIMIT_FSIZE
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur != rlim_t.max,
            let size = try? dataFileSize()
        else { return false }
        return UInt64(size) >= UInt64(limit.rlim_cur)
    }

    /// Below this much free space a failed write is reported as a full disk: LMDB turns a short
    /// write (what a filling disk gives) into `EIO`, so the free space is the only way to tell.
    static let nearlyFullBytes: UInt64 = 16 << 20
}

/// The directories this process has open, so that a second open of one is refused.
///
/// Each claim holds the directory open (a descriptor): a directory deleted while its store is
/// open keeps its inode until the claim is released, so a new directory cannot get the same
/// inode and be taken for one already open.
enum OpenDirectories {
    private static let claimed = Mutex([StoreDirectory.Identity: Int32]())

    /// Claims a directory; throws ``EventStoreError/Code/storeUnavailable`` when it is already open.
    static func claim(_ directory: StoreDirectory) throws(EventStoreError) {
        let inserted = claimed.withLock { claimed -> Bool in
            guard claimed[directory.identity] == nil else { return false }
            // Without the descriptor (none left, say) the claim still holds; only the inode's
            // reuse after a deletion is no longer prevented.
            claimed[directory.identity] = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            return true
        }
        if !inserted {
            throw EventStoreError(
                .storeUnavailable,
                "The store at '\(directory.path)' is already open in this process; use the open instance or close it first.")
        }
    }

    /// Whether this process has the directory open.
    static func isClaimed(_ identity: StoreDirectory.Identity) -> Bool {
        claimed.withLock { $0[identity] != nil }
    }

    /// Releases a claim made by ``claim(_:)``.
    static func release(_ directory: StoreDirectory) {
        let descriptor = claimed.withLock { $0.removeValue(forKey: directory.identity) }
        if let descriptor, descriptor >= 0 { close(descriptor) }
    }
}
