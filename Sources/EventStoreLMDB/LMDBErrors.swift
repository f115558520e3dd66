@_spi(Records) import EventStoreCore
import CLMDB

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

extension EventStoreError {
    /// Maps an LMDB return code to an error; `operation` names what was being done, for the message.
    static func lmdb(_ rc: Int32, _ operation: String) -> EventStoreError {
        let description = String(cString: mdb_strerror(rc))
        let cause = Cause.lmdb(code: rc, description: description)
        switch rc {
        case MDB_MAP_FULL:
            return EventStoreError(.storageFull, "The store's map is full while \(operation).", cause: cause)
        case MDB_INVALID, MDB_VERSION_MISMATCH, MDB_INCOMPATIBLE:
            return EventStoreError(
                .damaged,
                "The data file is not a readable LMDB environment while \(operation); restore it from a backup or choose another directory.",
                cause: cause)
        case MDB_READERS_FULL:
            return EventStoreError(
                .storeUnavailable,
                "Too many readers have the store open at once (LMDB's reader table is full) while \(operation); end some of them, or wait, and try again.",
                cause: cause)
        case ENOMEM:
            return EventStoreError(
                .storeUnavailable,
                "There is not enough address space to map the store while \(operation); raise the process's limit (ulimit -v) or free memory.",
                cause: cause)
        case MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_PANIC:
            return EventStoreError(
                .damaged, "The data file is damaged (\(operation)); restore it from a backup.", cause: cause)
        case ENOSPC, EDQUOT, EFBIG:
            return EventStoreError(
                .storageFull, "The disk is full (or the file size limit reached) while \(operation); free some space and try again.", cause: cause)
        case EACCES, EPERM, EROFS:
            return EventStoreError(
                .storeUnavailable,
                "Permission denied while \(operation); check the store directory's permissions.", cause: cause)
        case ENOTDIR:
            return EventStoreError(
                .storeUnavailable, "The store path is not a directory (\(operation)); choose a directory.",
                cause: cause)
        default:
            return EventStoreError(.storageFailure, "LMDB failed while \(operation).", cause: cause)
        }
    }
}
