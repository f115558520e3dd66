@_spi(Records) import EventStoreCore
import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which file an open store writes: the data file's device and inode when it was opened, and
/// its descriptor. A data file deleted while open (its directory removed, `rm -rf`) or replaced
/// at its path (a restore copied over a running store) still takes commits, which no later open
/// would read: every write transaction asks ``check()`` first and is refused instead.
struct DataFileIdentity: Sendable {
    let path: String
    let descriptor: Int32
    let device: UInt64
    let inode: UInt64

    /// The identity of the data file `env` has open; nil when it cannot be read (nothing is then
    /// checked).
    init?(env: OpaquePointer, path: String) {
        var descriptor: mdb_filehandle_t = -1
        var status = stat()
        guard mdb_env_get_fd(env, &descriptor) == MDB_SUCCESS, descriptor >= 0, fstat(descriptor, &status) == 0 else { return nil }
        self.path = path
        self.descriptor = descriptor
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// Nil while the file at ``path`` is still the one opened, and not deleted; otherwise the
    /// ``EventStoreError/Code/storeUnavailable`` to refuse writes with. Two `stat` calls: cheap
    /// beside a commit's flush.
    func check() -> EventStoreError? {
        var opened = stat()
        var atPath = stat()
        let atPathExists = stat(path, &atPath) == 0
        // Only a path that is not there says deleted: a stat that fails otherwise (a directory
        // made unreadable, a stale network handle) says nothing either way.
        let atPathMissing = !atPathExists && (errno == ENOENT || errno == ENOTDIR)
        let replaced = atPathExists && (UInt64(atPath.st_dev) != device || UInt64(atPath.st_ino) != inode)
        let deleted = atPathMissing || (fstat(descriptor, &opened) == 0 && opened.st_nlink == 0)
        guard deleted || replaced else { return nil }
        return EventStoreError(
            .storeUnavailable,
            "The store's data file '\(path)' was \(replaced ? "replaced" : "deleted") while it was open: nothing more is written to it, as it would be lost. Restart on the store you mean to serve (restore its directory from a backup if it was removed by mistake).")
    }
}
