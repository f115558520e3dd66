import EventStoreCore
import Synchronization

/// The id of one join of a member: `OWNER:UUID:N`, where OWNER is the store handle's
/// ``LogOwnership/ownerID``. A membership records it, so that a member restarted under the same name
/// (systemd's `Restart=`) can tell a holder that is provably dead (its handle's owner gone, or
/// this very process, which no longer runs that join) from a living twin, and take its name back
/// at once instead of waiting out its lease. Memberships written before carry a bare UUID: their
/// holder's owner is unknown, and they are waited out.
enum MemberInstance {
    /// A new join id for a member on `store`. N counts the joins of this process, so that ids
    /// stay distinct whatever the store's id generator gives (a test's counter repeats across
    /// stores). Throws when the store cannot give its owner id (see ``LogOwnership/ownerID``).
    static func make(on store: any GroupStore) async throws -> String {
        let owner = try await store.ownerID
        let sequence = joins.add(1, ordering: .relaxed).newValue
        return "\(owner):\(store.configuration.idGenerator().uuidString):\(sequence)"
    }

    private static let joins = Atomic<UInt64>(0)

    /// The owner id in `instance`, or nil for an id without one.
    static func owner(of instance: String) -> Int64? {
        guard let colon = instance.firstIndex(of: ":") else { return nil }
        return Int64(instance[..<colon])
    }

    /// The joins of this process that have not left: a holder with this process's owner id and
    /// an id not among them is a join of a process that had the same id before (a container's
    /// process 1, restarted), which is gone.
    private static let living = Mutex<Set<String>>([])

    static func started(_ instance: String) { _ = living.withLock { $0.insert(instance) } }
    static func ended(_ instance: String) { _ = living.withLock { $0.remove(instance) } }

    /// Whether the join `holder` is provably gone, seen from `store`: false when in doubt.
    static func isDead(_ holder: String, on store: any GroupStore) async -> Bool {
        guard let owner = owner(of: holder) else { return false }
        if owner == store.takenOwnerID { return !living.withLock { $0.contains(holder) } }
        return (try? await store.isOwnerAlive(owner)) == false
    }
}
