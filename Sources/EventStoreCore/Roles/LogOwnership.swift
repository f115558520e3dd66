/// Who owns long-running work recorded in the store (a shadow rebuild, say): a number that names
/// this handle to every other, and whether the handle that recorded one is still open.
public protocol LogOwnership: StoreHandle {
    /// A positive number that names this handle to every other handle of the store, in this
    /// process or another, on this host or another, while it is open. Long-running work recorded
    /// in the store (a shadow rebuild) keeps it, so that others can tell, with
    /// ``isOwnerAlive(_:)``, whether its owner is still at it or died. A backend may take what
    /// makes the id its own when first asked (PostgreSQL: a session holding an advisory lock),
    /// and throws when it cannot.
    var ownerID: Int64 { get async throws }

    /// This handle's owner id if it has been taken, without taking it: nil on a backend that
    /// takes it when first asked, before anything asked. Work recorded under an id this handle
    /// never took is not this handle's.
    var takenOwnerID: Int64? { get }

    /// Whether the handle that recorded `owner` (its ``ownerID``) still has the store open.
    /// LMDB: a living process of that id on this host (an LMDB store is not shared across
    /// hosts). PostgreSQL: a session of any host holding the owner's advisory lock. Throws when
    /// the backend cannot be asked.
    func isOwnerAlive(_ owner: Int64) async throws -> Bool
}
