@_spi(Records) import EventStoreCore
/// The named LMDB databases of a store, and the byte layout of their keys and values.
/// `docs/FORMAT.md` documents the same layout for readers in other languages; keep both in step.
enum Schema {
    /// The version written under the meta key `format` by this version: 2, records with checksums.
    /// A store of format 1 (records without them) is read as it is and marked 2 by its first
    /// write, since records of format 2 then join it; a store of any other format is refused.
    static let formatVersion: UInt32 = 2
    /// The store formats this version reads.
    static let readableFormats: ClosedRange<UInt32> = 1...4

    /// meta: ASCII key -> value. Holds `format` (u32 big-endian).
    static let meta = "meta"
    /// events: u64 big-endian position -> record (see ``RecordCodec``).
    static let events = "events"
    /// streams: stream name (UTF-8) -> u64 BE stream number, u64 BE last version, then the
    /// positions (u64 BE each) of the newest events not yet in a full chunk of the index, then,
    /// for a stream that was ever deleted, trimmed or given a retention policy, a 33-byte
    /// ``StreamHead/State`` (so the value's length is 1 more than a multiple of 8).
    static let streams = "streams"
    /// stream_index: u64 BE stream number, u64 BE first version of a chunk -> the positions
    /// (u64 BE each) of the chunk's ``indexChunk`` versions. Only full chunks are here.
    static let streamIndex = "stream_index"
    /// How many versions one stream-index chunk holds. A batch of appends to many streams then
    /// touches the index only for the streams whose chunk fills up, and the `streams` entries it
    /// rewrites anyway carry the rest.
    static let indexChunk = 16
    /// event_ids: 16-byte event id -> u64 BE position.
    static let eventIDs = "event_ids"

    static let formatKey = "format"

    /// tag_index (DUPSORT, DUPFIXED): a tag's UTF-8 bytes -> the u64 BE position of each event
    /// that carries it, in order.
    static let tagIndex = "tag_index"
    /// type_index (DUPSORT, DUPFIXED): an event type's UTF-8 bytes -> the u64 BE position of each
    /// event of that type, in order.
    static let typeIndex = "type_index"
    /// The format a store takes when it gains the tag and type indexes (at its first open for
    /// writing by this version): 4. Older programs, which would append without indexing, refuse it.
    static let indexedFormat: UInt32 = 4

    /// The format a store takes at its first deletion or retention policy: 3, stream heads that
    /// may carry a state and a log that may have holes. Older programs refuse it instead of
    /// reading a deleted stream's leftovers.
    static let deletionFormat: UInt32 = 3
    /// meta: the number of events deleted so far (u64 BE), the holes the log may have.
    static let deletedCountKey = "deleted"
    /// meta: `deleted-type:` + an event type -> how many deletions removed events of that type
    /// (u64 BE); `deleted-type:` alone counts every deletion. Projections compare them to see
    /// whether a deletion removed what they folded.
    static let deletedTypePrefix = "deleted-type:"
    /// meta: `trimmed-type:` + an event type -> how many of those deletions were trims by a
    /// retention policy (u64 BE); `trimmed-type:` alone counts every trim. Projections that
    /// handle deletions themselves are rebuilt after trims only.
    static let trimmedTypePrefix = "trimmed-type:"
    /// meta: `retention:` + a stream name -> empty, for each stream with a retention policy
    /// (what `purge` goes through).
    static let retentionPrefix = "retention:"
}

/// A stream's entry in the `streams` database.
struct StreamHead: Equatable {
    /// The stream's number, given in order of creation from 1; the stream index is keyed by it.
    var number: UInt64
    /// The version of the stream's last event (kept when its events are deleted, so that a new
    /// append continues the numbering).
    var version: UInt64
    /// The positions of versions after the last full chunk (`version % indexChunk` of them).
    /// Those below ``State/first`` are deleted.
    var pending: [UInt64]
    /// What deletion and retention left: stored only when it is not the default.
    var state = State()

    /// The part of a head that deletions and policies write: 33 bytes after the pending positions.
    struct State: Equatable {
        /// The first version still in the log; versions before it were deleted (1: none were).
        /// Greater than the version when every event was deleted.
        var first: UInt64 = 1
        /// Whether a hard delete tombstoned the stream: it refuses every append.
        var isTombstoned = false
        /// The retention policy, or nil.
        var retention: RetentionPolicy?

        var isDefault: Bool { first == 1 && !isTombstoned && retention == nil }
        static let size = 33
    }

    init(number: UInt64, version: UInt64, pending: [UInt64] = []) {
        self.number = number
        self.version = version
        self.pending = pending
    }

    /// How many events of the stream are in the log.
    var liveCount: UInt64 { state.first > version ? 0 : version - state.first + 1 }

    /// The first version whose position is in `pending` (versions before it are in full chunks).
    var firstPendingVersion: UInt64 { version - UInt64(pending.count) + 1 }

    /// The first version of the chunk that holds `version`.
    static func chunkStart(of version: UInt64) -> UInt64 {
        (version - 1) / UInt64(Schema.indexChunk) * UInt64(Schema.indexChunk) + 1
    }

    /// Decodes a `streams` value; nil when its size does not match its version.
    init?(_ bytes: UnsafeRawBufferPointer) {
        let hasState = bytes.count >= 16 + State.size && (bytes.count - 16) % 8 == State.size % 8
        let positionBytes = bytes.count - 16 - (hasState ? State.size : 0)
        guard bytes.count >= 16, positionBytes >= 0, positionBytes % 8 == 0 else { return nil }
        number = BigEndian.uint64(bytes, at: 0)
        version = BigEndian.uint64(bytes, at: 8)
        let count = positionBytes / 8
        guard UInt64(count) == version % UInt64(Schema.indexChunk) else { return nil }
        pending = (0..<count).map { BigEndian.uint64(bytes, at: 16 + 8 * $0) }
        if hasState {
            let offset = 16 + positionBytes
            let flags = bytes[offset + 32]
            guard flags & ~0x01 == 0 else { return nil }
            state.first = BigEndian.uint64(bytes, at: offset)
            guard state.first > 0 else { return nil }
            state.isTombstoned = flags & 0x01 != 0
            state.retention = RetentionPolicy(
                stored: BigEndian.uint64(bytes, at: offset + 8), BigEndian.uint64(bytes, at: offset + 16),
                BigEndian.uint64(bytes, at: offset + 24))
        }
    }

    /// Writes this head as `stream`'s entry in `streams`.
    func store(as stream: String, _ txn: Transaction, _ databases: Databases) throws {
        var name = stream
        try name.withUTF8 { bytes in _ = try withBytes { try txn.put(databases.streams, UnsafeRawBufferPointer(bytes), $0) } }
    }

    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let stateBytes = state.isDefault ? 0 : State.size
        return try withUnsafeTemporaryAllocation(byteCount: 16 + 8 * pending.count + stateBytes, alignment: 8) { buffer in
            guard let base = buffer.baseAddress else { return try body(UnsafeRawBufferPointer(buffer)) }
            BigEndian.store(number, into: base, at: 0)
            BigEndian.store(version, into: base, at: 8)
            for (index, position) in pending.enumerated() { BigEndian.store(position, into: base, at: 16 + 8 * index) }
            if stateBytes > 0 {
                let offset = 16 + 8 * pending.count
                let stored = state.retention?.stored ?? (0, 0, 0)
                BigEndian.store(state.first, into: base, at: offset)
                BigEndian.store(stored.0, into: base, at: offset + 8)
                BigEndian.store(stored.1, into: base, at: offset + 16)
                BigEndian.store(stored.2, into: base, at: offset + 24)
                base.storeBytes(of: state.isTombstoned ? 1 : 0, toByteOffset: offset + 32, as: UInt8.self)
            }
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }
}
