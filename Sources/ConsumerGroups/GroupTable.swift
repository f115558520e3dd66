import EventStoreCore
import Foundation

/// The table `$groups` where every group's state lives, beside the log, so that it commits with
/// acknowledgements (docs/FORMAT.md, "Consumer groups"). Keys are a kind byte, the group's name,
/// a 0 byte, then the kind's own part:
///
/// | kind | rest of the key | value |
/// |---|---|---|
/// | `d` | nothing | the definition, JSON, with `"creation"`: an id made when the group was created |
/// | `m` | the member's name | u64 BE: when its membership expires (µs since 1970), then the id of the join holding the name |
/// | `l` | u16 BE partition | u64 BE expiry (µs), then the holding member's name |
/// | `b` | u16 BE partition | u64 BE: the partition's checkpoint, every event of it through that position is settled |
/// | `t` | u64 BE position | u32 BE: failed tries of the event so far |
/// | `k` | u64 BE position | a parked event, JSON `{"stream","type","partition","reason","tries","replay"}` |
enum GroupTable {
    static let name = "$groups"

    enum Kind: UInt8 {
        case definition = 0x64, member = 0x6d, lease = 0x6c, checkpoint = 0x62, tries = 0x74, parked = 0x6b
    }

    static func prefix(_ kind: Kind, _ group: String) -> [UInt8] { [kind.rawValue] + Array(group.utf8) + [0] }
    static func key(_ kind: Kind, _ group: String, _ rest: [UInt8]) -> [UInt8] { prefix(kind, group) + rest }
    static func key(_ kind: Kind, _ group: String, partition: Int) -> [UInt8] {
        key(kind, group, [UInt8(truncatingIfNeeded: partition >> 8), UInt8(truncatingIfNeeded: partition)])
    }
    static func key(_ kind: Kind, _ group: String, position: UInt64) -> [UInt8] { key(kind, group, bytes(position)) }

    static func bytes(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    static func uint64(_ bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt64 {
        guard bytes.count >= offset + 8 else { return 0 }
        return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The definition of `group`; ``ConsumerGroupError/Code/notFound`` when there is none.
    static func definition(_ group: String, _ txn: TableTransaction) async throws -> GroupDefinition {
        let found = try await txn.withValue(name, key(.definition, group, [])) { GroupDefinition(name: group, stored: $0) }
        guard let found else {
            throw ConsumerGroupError(.notFound, "There is no consumer group '\(group)'; create it first (esctl group create \(group)).")
        }
        guard let definition = found else {
            throw EventStoreError(.damaged, "The definition of the consumer group '\(group)' does not decode; delete the group and create it again.")
        }
        return definition
    }

    /// The id the group was created with (nil: no such group).
    static func creation(_ group: String, _ txn: TableTransaction) async throws -> String? {
        try await txn.withValue(name, key(.definition, group, [])) { bytes in
            (try? JSONValue(parsing: Array(bytes)))?["creation"]?.stringValue ?? ""
        }
    }

    /// Each partition's checkpoint (0 when it has none yet).
    static func checkpoints(_ group: String, partitions: Int, _ txn: TableTransaction) async throws -> [UInt64] {
        var checkpoints = Array(repeating: UInt64(0), count: partitions)
        try await txn.scan(name, prefix: prefix(.checkpoint, group)) { key, value in
            let partition = Int(key[key.count - 2]) << 8 | Int(key[key.count - 1])
            if partition < partitions { checkpoints[partition] = uint64(value) }
            return true
        }
        return checkpoints
    }

    /// Each partition's lease: its holder and when it expires.
    static func leases(_ group: String, _ txn: TableTransaction) async throws -> [Int: (member: String, expires: Int64)] {
        var leases: [Int: (member: String, expires: Int64)] = [:]
        try await txn.scan(name, prefix: prefix(.lease, group)) { key, value in
            let partition = Int(key[key.count - 2]) << 8 | Int(key[key.count - 1])
            leases[partition] = (String(decoding: value.dropFirst(8), as: UTF8.self), Int64(bitPattern: uint64(value)))
            return true
        }
        return leases
    }

    static func putLease(_ group: String, partition: Int, member: String, expires: Int64, _ txn: TableTransaction) async throws {
        try await txn.put(name, key(.lease, group, partition: partition), bytes(UInt64(bitPattern: expires)) + Array(member.utf8))
    }

    /// The live members and when each expires.
    static func members(_ group: String, _ txn: TableTransaction) async throws -> [String: Int64] {
        var members: [String: Int64] = [:]
        let start = prefix(.member, group).count
        try await txn.scan(name, prefix: prefix(.member, group)) { key, value in
            members[String(decoding: key.dropFirst(start), as: UTF8.self)] = Int64(bitPattern: uint64(value))
            return true
        }
        return members
    }

    /// The failed tries recorded so far, by position.
    static func tries(_ group: String, _ txn: TableTransaction) async throws -> [UInt64: Int] {
        var tries: [UInt64: Int] = [:]
        try await txn.scan(name, prefix: prefix(.tries, group)) { key, value in
            let position = uint64(UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...]))
            tries[position] = value.count >= 4 ? Int(UInt32(bigEndian: value.loadUnaligned(as: UInt32.self))) : 0
            return true
        }
        return tries
    }

    static func putTries(_ group: String, position: UInt64, tries: Int, _ txn: TableTransaction) async throws {
        try await txn.put(name, key(.tries, group, position: position), withUnsafeBytes(of: UInt32(clamping: tries).bigEndian) { Array($0) })
    }

    /// The parked events, in position order.
    static func parked(_ group: String, _ txn: TableTransaction) async throws -> [ParkedEvent] {
        var parked: [ParkedEvent] = []
        try await txn.scan(name, prefix: prefix(.parked, group)) { key, value in
            let position = uint64(UnsafeRawBufferPointer(rebasing: key[(key.count - 8)...]))
            if let event = ParkedEvent(position: position, stored: value) { parked.append(event) }
            return true
        }
        return parked
    }

    static func putParked(_ group: String, _ event: ParkedEvent, _ txn: TableTransaction) async throws {
        try await txn.put(name, key(.parked, group, position: event.position), event.json)
    }

    /// Every row of `group`.
    static func removeAll(_ group: String, _ txn: TableTransaction) async throws {
        for kind in [Kind.definition, .member, .lease, .checkpoint, .tries, .parked] {
            var keys: [[UInt8]] = []
            try await txn.scan(name, prefix: prefix(kind, group)) { key, _ in
                keys.append(Array(key))
                return true
            }
            for key in keys { _ = try await txn.delete(name, key) }
        }
    }
}

/// An event a group parked after it failed too often (or its handler parked it): where it is,
/// why, and whether it waits to be delivered again (``ConsumerGroups/replayParked(_:position:)``).
public struct ParkedEvent: Sendable, Equatable {
    public let position: UInt64
    public let stream: String
    public let type: String
    public let partition: Int
    public let reason: String
    /// The failed tries before it was parked.
    public let tries: Int
    /// Whether it waits to be delivered again.
    public var replay: Bool

    public init(position: UInt64, stream: String, type: String, partition: Int, reason: String, tries: Int, replay: Bool) {
        self.position = position
        self.stream = stream
        self.type = type
        self.partition = partition
        self.reason = reason
        self.tries = tries
        self.replay = replay
    }

    var json: [UInt8] {
        Array(
            JSONValue.object([
                ("stream", .string(stream)), ("type", .string(type)), ("partition", .int(Int64(partition))), ("reason", .string(reason)),
                ("tries", .int(Int64(tries))), ("replay", .bool(replay)),
            ]).serialized.utf8)
    }

    init?(position: UInt64, stored bytes: UnsafeRawBufferPointer) {
        guard let value = try? JSONValue(parsing: Array(bytes)), let stream = value["stream"]?.stringValue,
            let type = value["type"]?.stringValue, let partition = value["partition"]?.intValue, let reason = value["reason"]?.stringValue,
            let tries = value["tries"]?.intValue
        else { return nil }
        self.init(
            position: position, stream: stream, type: type, partition: Int(partition), reason: reason, tries: Int(tries),
            replay: value["replay"]?.boolValue ?? false)
    }
}
