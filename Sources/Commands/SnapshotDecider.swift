import EventStoreCore

/// A ``StreamDecider`` whose state can be kept in snapshots, so that ``CommandHandler`` reads
/// only the events after the latest one: a command then costs the same with a thousand events
/// behind it or a million.
///
/// The state is stored as JSON with sorted keys (canonical: the same state always gives the same
/// bytes), and must decode back to an equal state, so that folding from a snapshot gives what
/// folding from the first event gives. Snapshots are a cache: deleting them changes no outcome.
///
/// ## Topics
/// ### Requirements
/// - ``snapshotName``
/// - ``snapshotVersion``
public protocol SnapshotDecider: StreamDecider where State: Codable & Equatable {
    /// The name the decider's snapshots are kept under (`cart`, say): stable, unique among the
    /// application's deciders, letters, digits, `-`, `_` and `.`.
    var snapshotName: String { get }
    /// Bump it whenever ``Decider/evolve(_:with:)`` or the state's shape changes: snapshots of
    /// another version are ignored (and replaced by the next one written).
    var snapshotVersion: Int { get }
}
