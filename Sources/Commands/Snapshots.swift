import EventStoreCore
import Foundation
import Logging

/// Where and how ``CommandHandler`` keeps snapshots of deciders' states: the table
/// ``Snapshots/table`` beside the log, one row per decider and set of streams, written in the
/// transaction of the append that makes it due (so a snapshot never describes versions that
/// were not committed). `docs/FORMAT.md` gives the bytes.
public enum Snapshots {
    /// The table the snapshots are kept in.
    public static let table = "$snapshots"
    /// The format of a snapshot's value.
    static let format: UInt8 = 1

    /// One stored snapshot, as listed: its key's parts and its value's header.
    public struct Entry: Sendable, Equatable {
        /// The decider's ``SnapshotDecider/snapshotName``.
        public let decider: String
        /// The decider's ``SnapshotDecider/snapshotVersion`` when it was written.
        public let deciderVersion: Int64
        /// The fingerprint of the store's upcasters when it was written (0: none): a snapshot
        /// folded from events upcast by other steps is passed over, undecoded.
        public let upcasters: UInt64
        /// The decider's streams and the version of each the state folds through.
        public let versions: [StreamVersion]
        /// The size of the stored value, in bytes.
        public let size: Int
        /// The state's JSON.
        public let state: [UInt8]
    }

    /// A stream and a version of it.
    public struct StreamVersion: Sendable, Equatable {
        public let stream: String
        public let version: UInt64

        public init(stream: String, version: UInt64) {
            self.stream = stream
            self.version = version
        }
    }

    /// The key of a decider's snapshot: its name, then each of its streams, each followed by a
    /// 0 byte. Nil when it would be longer than LMDB's keys may be (511 bytes): such a decider
    /// is not snapshotted.
    static func key(decider: String, streams: [String]) -> [UInt8]? {
        var key = Array(decider.utf8) + [0]
        for stream in streams { key += Array(stream.utf8) + [0] }
        return key.count <= 511 ? key : nil
    }

    /// A snapshot's value: the format (1, or 2 when the store has upcasters), the decider's
    /// version (i64), in format 2 the fingerprint of the store's upcasters (u64), the number of
    /// streams (u32) and each one's version (u64), all big-endian, then the state's JSON to the end.
    static func value(deciderVersion: Int, upcasters: UInt64, versions: [UInt64], state: [UInt8]) -> [UInt8] {
        var value: [UInt8] = [upcasters == 0 ? format : 2]
        withUnsafeBytes(of: Int64(deciderVersion).bigEndian) { value += $0 }
        if upcasters != 0 { withUnsafeBytes(of: upcasters.bigEndian) { value += $0 } }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: versions.count).bigEndian) { value += $0 }
        for version in versions { withUnsafeBytes(of: version.bigEndian) { value += $0 } }
        return value + state
    }

    /// Reads a stored snapshot back; nil when its bytes do not hold one.
    static func entry(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Entry? {
        let parts = key.split(separator: 0, omittingEmptySubsequences: false).dropLast()
        guard key.last == 0, let name = parts.first.flatMap({ String(validating: $0, as: UTF8.self) }) else { return nil }
        let streams = parts.dropFirst().map { String(decoding: $0, as: UTF8.self) }
        // Format 2 has the upcasters' fingerprint after the decider's version.
        guard value.count >= 1, value[0] == format || value[0] == 2 else { return nil }
        let header = value[0] == 2 ? 21 : 13
        guard value.count >= header else { return nil }
        func number<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
            value.loadUnaligned(fromByteOffset: offset, as: T.self).bigEndian
        }
        let deciderVersion = number(Int64.self, at: 1)
        let upcasters = header == 21 ? number(UInt64.self, at: 9) : 0
        let count = Int(number(UInt32.self, at: header - 4))
        guard count == streams.count, value.count >= header + 8 * count else { return nil }
        let versions = (0..<count).map { StreamVersion(stream: streams[$0], version: number(UInt64.self, at: header + 8 * $0)) }
        return Entry(
            decider: name, deciderVersion: deciderVersion, upcasters: upcasters, versions: versions, size: value.count,
            state: Array(value[(header + 8 * count)...]))
    }

    /// Every stored snapshot, in key order (deciders, then streams). Reads nothing but the table.
    public static func list(in store: any LogReading & LogTables) async throws -> [Entry] {
        guard try await !store.existingTables([table]).isEmpty else { return [] }
        try await store.openTables([table])
        return try await store.readTables { txn in
            var entries: [Entry] = []
            try await txn.scan(table, prefix: []) { key, value in
                if let entry = entry(key: key, value: value) { entries.append(entry) }
                return true
            }
            return entries
        }
    }

    /// Removes every snapshot, or those of deciders whose streams include `stream`; returns how
    /// many. Outcomes of commands do not change: the next ones fold from the first event, and
    /// write new snapshots when they are due.
    @discardableResult
    public static func drop(in store: any LogReading & LogTables, stream: String? = nil) async throws -> Int {
        guard try await !store.existingTables([table]).isEmpty else { return 0 }
        try await store.openTables([table])
        return try await store.writeTables { txn in
            var keys: [[UInt8]] = []
            try await txn.scan(table, prefix: []) { key, value in
                guard let stream else {
                    keys.append(Array(key))
                    return true
                }
                if let entry = entry(key: key, value: value), entry.versions.contains(where: { $0.stream == stream }) {
                    keys.append(Array(key))
                }
                return true
            }
            for key in keys { _ = try await txn.delete(table, key) }
            return keys.count
        }
    }

    /// The JSON a state is stored as: sorted keys, so the same state gives the same bytes.
    static func encode<State: Encodable>(_ state: State) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(state))
    }

    static func decode<State: Decodable>(_ type: State.Type, from bytes: [UInt8]) throws -> State {
        try JSONDecoder().decode(State.self, from: Data(bytes))
    }
}

/// A decider's snapshots, as the handler uses them: where its row is, and how its state is
/// read and written. Made for a ``SnapshotDecider``; the handler's generic path has none.
struct SnapshotCodec<D: StreamDecider>: Sendable {
    let key: [UInt8]
    let name: String
    let version: Int
    /// The fingerprint of the store's upcasters, which snapshots are written with and read at.
    let upcasters: UInt64
    let encode: @Sendable (D.State) throws -> [UInt8]
    let decode: @Sendable ([UInt8]) throws -> D.State

    init?(_ decider: D, upcasters: UInt64) where D: SnapshotDecider {
        guard let key = Snapshots.key(decider: decider.snapshotName, streams: decider.streams) else { return nil }
        self.key = key
        name = decider.snapshotName
        version = decider.snapshotVersion
        self.upcasters = upcasters
        encode = { try Snapshots.encode($0) }
        decode = { try Snapshots.decode(D.State.self, from: $0) }
    }

    /// The state and versions a stored snapshot holds, when it is of this decider's version and
    /// its streams and decodes; nil otherwise (logged when it does not decode). The version is
    /// checked before the state is decoded: a snapshot of another version is never decoded.
    func read(_ bytes: [UInt8], streams: [String], logger: Logger) -> (state: D.State, versions: [String: UInt64])? {
        let entry = bytes.withUnsafeBytes { value in key.withUnsafeBytes { Snapshots.entry(key: $0, value: value) } }
        guard let entry, entry.deciderVersion == Int64(version), entry.upcasters == upcasters, entry.versions.map(\.stream) == streams else { return nil }
        do {
            let state = try decode(entry.state)
            return (state, Dictionary(entry.versions.map { ($0.stream, $0.version) }, uniquingKeysWith: { first, _ in first }))
        } catch {
            logger.info(
                "passed over a snapshot that does not decode",
                metadata: [LogKeys.decider: "\(name)", LogKeys.reason: "\(error)"])
            return nil
        }
    }
}

extension Snapshots {
    /// Checks a stored snapshot against the log with the decider it belongs to: no version past
    /// its stream's head, and the state it holds equal to the fold of the decider's streams
    /// through those versions. Returns the problem in one sentence, or nil. A snapshot of another
    /// version of the decider is not checked (the handler ignores it). Throws the store's errors.
    public static func check<D: SnapshotDecider>(_ entry: Entry, with decider: D, in store: any LogReading & LogTables) async throws -> String? {
        let place = "the snapshot of '\(entry.decider)' for \(entry.versions.map { "\($0.stream)@\($0.version)" }.joined(separator: ", "))"
        let upcasters = (try? Upcasting(store.configuration.upcasters))?.fingerprint(consuming: nil) ?? 0
        guard entry.deciderVersion == Int64(decider.snapshotVersion), entry.upcasters == upcasters else { return nil }
        guard entry.versions.map(\.stream) == decider.streams else { return "\(place) is not of the decider's streams \(decider.streams)" }
        let stored: D.State
        do {
            stored = try decode(D.State.self, from: entry.state)
        } catch {
            return "\(place) does not decode: \(error)"
        }
        // The streams' events through the snapshot's versions, and each stream's head, in one snapshot.
        let (decoded, pastHead): ([(UInt64, D.Event)], String?) = try await store.readTables { tables in
            var decoded: [(UInt64, D.Event)] = []
            for version in entry.versions {
                var head: UInt64 = 0
                try await tables.forEachEvent(inStream: version.stream) { event in
                    head = event.version
                    // Events the decider cannot read are passed over, as when it loads.
                    if event.version <= version.version, let decodedEvent = try? D.Event(recorded: event) {
                        decoded.append((event.position, decodedEvent))
                    }
                }
                guard version.version <= head else { return ([], "\(place) is past the head of '\(version.stream)' (version \(head))") }
            }
            return (decoded.sorted { $0.0 < $1.0 }, nil)
        }
        if let pastHead { return pastHead }
        var folded = decider.initialState
        for (_, event) in decoded { decider.evolve(&folded, with: event) }
        return folded == stored ? nil : "\(place) differs from the fold of its streams through those versions"
    }
}
