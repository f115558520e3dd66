import EventStoreCore

/// A projection's entry in the runner's `projections` table (the state that answers queries) or
/// `projection-rebuilds` table (a state a rebuild builds beside it): which version built it, the
/// last position applied, whether a (re)build is under way, and which set of tables holds it.
struct Checkpoint: RowValue, Equatable, Sendable {
    var version: Int64
    /// The last position applied; 0 before the first event.
    var position: UInt64
    /// True from the start of a (re)build until the state first reaches the head.
    var isBuilding: Bool
    /// Which set of tables holds the state: 0 or 1. A rebuild builds in the other one, so the
    /// state it replaces serves queries until the swap.
    var generation: Int = 0
    /// For a rebuild: when this process started or resumed it (microseconds since 1970, from the
    /// store's clock) and the position it started from, for its rate. 0 otherwise.
    var startedAt: Int64 = 0
    var startPosition: UInt64 = 0
    /// For a rebuild: the process running it (its id; 0 when unknown), so that another process
    /// tells a rebuild under way from one whose process died.
    var owner: Int64 = 0
    /// The fingerprint of the upcasters of the event types the projection consumed when this
    /// state was built (0: none of its types had any). Part of what built the state: a state
    /// whose types' upcasters changed is rebuilt, as one of another version is.
    var upcasters: UInt64 = 0
    /// The store's count of deletions of the event types the projection consumed when this
    /// state was built (see ``TableTransaction/deletionFingerprint(consuming:)``): a deletion of
    /// events it folded changes it, and the state is rebuilt without them. 0 for a projection
    /// that handles deletions itself.
    var deletions: UInt64 = 0

    /// The checkpoints of the states that answer queries, one per projection name.
    static let table = "projections"
    /// The checkpoints of states being rebuilt beside them.
    static let rebuildTable = "projection-rebuilds"

    static func key(_ projection: String) -> [UInt8] { RowKey(projection).bytes }

    /// The key, in ``rebuildTable``, of how far a rebuild folding in scratch tables has come (a
    /// checkpoint that no table of the store holds yet: for its progress, never to resume from).
    static func foldedKey(_ projection: String) -> [UInt8] { RowKey(projection).appending("folded").bytes }

    init(
        version: Int64, position: UInt64, isBuilding: Bool, generation: Int = 0, startedAt: Int64 = 0, startPosition: UInt64 = 0,
        owner: Int64 = 0, upcasters: UInt64 = 0, deletions: UInt64 = 0
    ) {
        self.deletions = deletions
        self.version = version
        self.position = position
        self.isBuilding = isBuilding
        self.generation = generation
        self.startedAt = startedAt
        self.startPosition = startPosition
        self.owner = owner
        self.upcasters = upcasters
    }

    /// A new (re)build's checkpoint for `definition`, at position 0.
    init(building definition: ProjectionDefinition, generation: Int = 0, startedAt: Int64 = 0, owner: Int64 = 0) {
        self.init(
            version: definition.version, position: 0, isBuilding: true, generation: generation, startedAt: startedAt, owner: owner,
            upcasters: definition.upcasters, deletions: definition.deletions)
    }

    /// What built the state.
    var definition: ProjectionDefinition { ProjectionDefinition(version: version, upcasters: upcasters, deletions: deletions) }

    func encode(to writer: inout RowWriter) {
        writer.write(version)
        writer.write(position)
        writer.write(isBuilding)
        // The common case keeps the 17 bytes of the first format, which earlier versions read.
        guard generation != 0 || startedAt != 0 || startPosition != 0 || owner != 0 || upcasters != 0 || deletions != 0 else { return }
        writer.write(generation == 1)
        writer.write(startedAt)
        writer.write(startPosition)
        writer.write(owner)
        // Written only when some consumed type has upcasters (or deletions), so states built
        // before keep their bytes.
        guard upcasters != 0 || deletions != 0 else { return }
        writer.write(upcasters)
        guard deletions != 0 else { return }
        writer.write(deletions)
    }

    init(from reader: inout RowReader) throws(RowDecodingError) {
        version = try reader.read(Int64.self)
        position = try reader.read(UInt64.self)
        isBuilding = try reader.read(Bool.self)
        // Written before rebuilds ran beside the serving state: 17 bytes, generation 0.
        guard !reader.isAtEnd else { return }
        generation = try reader.read(Bool.self) ? 1 : 0
        startedAt = try reader.read(Int64.self)
        startPosition = try reader.read(UInt64.self)
        owner = try reader.read(Int64.self)
        guard !reader.isAtEnd else { return }
        upcasters = try reader.read(UInt64.self)
        guard !reader.isAtEnd else { return }
        deletions = try reader.read(UInt64.self)
    }
}

/// What a projection's state is built by: the projection's version and the fingerprint of the
/// upcasters of the event types it consumes (see ``Checkpoint/upcasters``). A stored state of
/// another definition is rebuilt.
struct ProjectionDefinition: Equatable, Sendable, CustomStringConvertible {
    let version: Int64
    let upcasters: UInt64
    let deletions: UInt64

    /// The definition of `projection` under the store's upcasters and deletions, as `txn` knows
    /// them; without `countingDeletions`, with deletions 0 (for ``foldsLike(_:)``, which does not
    /// look at them, without the reads they cost).
    init(_ projection: any Projection, in txn: TableTransaction, countingDeletions: Bool = true) async throws {
        self.init(
            version: Int64(projection.version), upcasters: txn.upcasterFingerprint(consuming: projection.eventTypes),
            deletions: countingDeletions ? try await txn.deletionFingerprint(consuming: projection.eventTypes) : 0)
    }

    init(version: Int64, upcasters: UInt64, deletions: UInt64 = 0) {
        self.version = version
        self.upcasters = upcasters
        self.deletions = deletions
    }

    /// Whether a state of `self` may go on folding for `current`: the same version and upcasters.
    /// A state that differs only in deletions folds on (it serves until its rebuild swaps).
    func foldsLike(_ current: ProjectionDefinition) -> Bool { version == current.version && upcasters == current.upcasters }

    /// Why a state of `self` is rebuilt for `current`, in a sentence's tail ("changed from ...").
    func change(to current: ProjectionDefinition) -> String {
        if version != current.version { return "changed from version \(version) to \(current.version)" }
        if upcasters != current.upcasters { return "reads event types whose upcasters changed" }
        return "read events that were deleted since"
    }

    var description: String {
        var text = "version \(version)"
        if upcasters != 0 { text += " with upcasters \(String(upcasters, radix: 16))" }
        if deletions != 0 { text += " after \(deletions) deletions" }
        return text
    }
}
