import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The directory that holds a store: created when missing, checked before LMDB sees it, and
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

    static let dataFileName = "data.mdb"
    static let lockFileName = "lock.mdb"

    /// Creates the directory (mode 0700) when missing and checks that it can hold a store: it is a
    /// directory, and it is either empty or already holds an LMDB data file.
    static func prepare(_ path: String) throws(EventStoreError) -> StoreDirectory {
        if path.isEmpty {
            throw EventStoreError(.invalidInput, "The store path is empty; give a directory.")
        }
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else { throw .system("checking the store directory '\(path)'") }
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw .system("creating the store directory '\(path)'")
            }
            guard stat(path, &info) == 0 else { throw .system("checking the store directory '\(path)'") }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw EventStoreError(
                .storeUnavailable, "The store path '\(path)' is a file, not a directory; give a directory.")
        }
        guard access(path, R_OK | W_OK | X_OK) == 0 else {
            throw EventStoreError(
                .storeUnavailable,
                "The store directory '\(path)' cannot be read and written; fix its permissions or choose another.")
        }
        let dataPath = path + "/" + dataFileName
        if access(dataPath, F_OK) != 0 {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            let foreign = entries.filter { $0 != lockFileName }
            if !foreign.isEmpty {
                throw EventStoreError(
                    .storeUnavailable,
                    "The directory '\(path)' holds other files and no event store; give an empty or new directory.")
            }
        }
        return StoreDirectory(
            path: path, identity: Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
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
        guard getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max,
            let size = try? dataFileSize()
        else { return false }
        return UInt64(size) >= UInt64(limit.rlim_cur)
    }

    /// Below this much free space a failed write is reported as a full disk: LMDB turns a short
    /// write (what a filling disk gives) into `EIO`, so the free space is the only way to tell.
    static let nearlyFullBytes: UInt64 = 16 << 20
}

/// The directories this process has open, so that a second open of one is refused.
enum OpenDirectories {
    private static let claimed = Mutex(Set<StoreDirectory.Identity>())

    /// Claims a directory; throws ``EventStoreError/Code/storeUnavailable`` when it is already open.
    static func claim(_ directory: StoreDirectory) throws(EventStoreError) {
        let inserted = claimed.withLock { $0.insert(directory.identity).inserted }
        if !inserted {
            throw EventStoreError(
                .storeUnavailable,
                "The store at '\(directory.path)' is already open in this process; use the open instance or close it first.")
        }
    }

    /// Releases a claim made by ``claim(_:)``.
    static func release(_ directory: StoreDirectory) {
        _ = claimed.withLock { $0.remove(directory.identity) }
    }
}
