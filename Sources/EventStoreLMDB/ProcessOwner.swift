#if canImport(Glibc)
@_spi(Records) import EventStoreCore
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB store is shared by the processes of one host only, so a handle's owner id is its
/// process id, and an owner is alive while a process of that id is.
extension EventStore {
    /// This process's id (see ``LogOwnership/ownerID``).
    public var ownerID: Int64 { get async throws { Int64(getpid()) } }

    /// This process's id: it is never taken, only had (see ``LogOwnership/takenOwnerID``).
    public var takenOwnerID: Int64? { Int64(getpid()) }

    /// Whether a process with the id `owner` is alive on this host (see ``LogOwnership/isOwnerAlive(_:)``).
    /// Never throws: a number that cannot be a process id is a dead owner.
    public func isOwnerAlive(_ owner: Int64) async throws -> Bool {
        guard owner > 0, owner <= Int64(Int32.max) else { return false }
        return kill(pid_t(owner), 0) == 0 || errno == EPERM
    }
}
