import EventStoreCore
import Synchronization

/// Which rebuilds are under way: those of this process (registered while its runners run them)
/// and those whose recorded owner (``LogOwnership/ownerID``) still has the store open, in another
/// process or on another host. A rebuild whose owner died (a kill -9, a lost host) is
/// abandoned: its old state serves until a runner finishes it.
enum RebuildOwners {
    /// Store location and projection name of each rebuild a runner of this process is running.
    private static let registered = Mutex<[String: Int]>([:])

    private static func key(_ store: String, _ projection: String) -> String { store + "\u{0}" + projection }

    /// Marks the rebuilds of `projections` as run by this process until `body` returns.
    static func running<T>(_ store: String, _ projections: [String], _ body: () async throws -> T) async rethrows -> T {
        registered.withLock { registered in for name in projections { registered[key(store, name), default: 0] += 1 } }
        defer {
            registered.withLock { registered in
                for name in projections {
                    let key = key(store, name)
                    let count = registered[key] ?? 1
                    registered[key] = count > 1 ? count - 1 : nil
                }
            }
        }
        return try await body()
    }

    /// Whether the rebuild recorded with `owner` is being run now: by a runner of this handle,
    /// or by another handle that still has the store open. Throws when the backend cannot say.
    static func isRunning(owner: Int64, in store: any ProjectionStore, projection: String) async throws -> Bool {
        if owner == store.takenOwnerID { return registered.withLock { $0[key(store.location, projection)] != nil } }
        return try await store.isOwnerAlive(owner)
    }
}
