import EventStoreCore
import Foundation

/// Consumer groups over an event store: several members, in this process or others, on this
/// host or others, share the work of handling events, each event handled by one member.
///
/// - At least once: an event is delivered until a member settles it (acknowledges, skips or
///   parks it); a member that dies leaves its unsettled deliveries to the next holder.
/// - In order per key: a partition (the keys that hash into it) has at most one delivery
///   outstanding; it is never handed to another member meanwhile.
/// - Its checkpoint, the lowest partition checkpoint, never passes an unsettled event; after
///   ``GroupDefinition/maxTries`` failed tries an event is parked, and parked events can be
///   delivered again without moving any checkpoint back.
/// - State (definitions, memberships, leases, checkpoints, tries, parked events) lives in the
///   store's table `$groups`, so an acknowledgement commits with what the member writes in the
///   same transaction (``Delivery/acknowledge(alsoWriting:)``): its effects happen exactly once.
///
/// Errors: ``ConsumerGroupError`` with its codes, and the store's errors unchanged.
public struct ConsumerGroups: Sendable {
    public let store: any GroupStore

    public init(store: any GroupStore) {
        self.store = store
    }

    /// Creates a group; returns false when one of that name and definition exists already
    /// (nothing written). Throws ``ConsumerGroupError/Code/alreadyExists`` when one exists with
    /// another definition, ``ConsumerGroupError/Code/invalidInput`` for a bad definition.
    @discardableResult
    public func create(_ definition: GroupDefinition) async throws -> Bool {
        try definition.validate()
        try await store.openTables([GroupTable.name])
        let creation = store.configuration.idGenerator().uuidString
        return try await store.writeTables { txn in
            if let existing = try? await GroupTable.definition(definition.name, txn) {
                guard existing == definition else {
                    throw ConsumerGroupError(
                        .alreadyExists, "The consumer group '\(definition.name)' exists with another definition; delete it first, or use another name.")
                }
                return false
            }
            try await txn.put(GroupTable.name, GroupTable.key(.definition, definition.name, []), definition.json(creation: creation))
            return true
        }
    }

    /// Deletes a group and all its state (members' next settlements fail with ``ConsumerGroupError/Code/notFound``).
    public func delete(_ name: String) async throws {
        try GroupNames.validate(name, kind: "group")
        try await store.openTables([GroupTable.name])
        try await store.writeTables { txn in
            _ = try await GroupTable.definition(name, txn)
            try await GroupTable.removeAll(name, txn)
        }
    }

    /// The names of every group, in byte order.
    public func names() async throws -> [String] {
        try await store.openTables([GroupTable.name])
        return try await store.readTables { txn in
            var names: [String] = []
            try await txn.scan(GroupTable.name, prefix: [GroupTable.Kind.definition.rawValue]) { key, _ in
                names.append(String(decoding: key.dropFirst().dropLast(), as: UTF8.self))
                return true
            }
            return names
        }
    }

    /// What a group is doing now: its members, each partition's holder and checkpoint, its
    /// checkpoint and lag behind the head, and how many events it parked.
    public func status(_ name: String) async throws -> GroupStatus {
        try GroupNames.validate(name, kind: "group")
        try await store.openTables([GroupTable.name])
        return try await store.readTables { [store] txn in
            let now = try await GroupClock.now(store, txn)
            let definition = try await GroupTable.definition(name, txn)
            let checkpoints = try await GroupTable.checkpoints(name, partitions: definition.partitions, txn)
            let leases = try await GroupTable.leases(name, txn)
            let members = try await GroupTable.members(name, txn).filter { $0.value > now }.keys.sorted()
            let partitions = (0..<definition.partitions).map { partition in
                let lease = leases[partition].flatMap { $0.expires > now ? $0.member : nil }
                return PartitionStatus(partition: partition, member: lease, checkpoint: checkpoints[partition])
            }
            let head = try await txn.headPosition()
            let checkpoint = checkpoints.min() ?? 0
            return GroupStatus(
                definition: definition, members: members, partitions: partitions, checkpoint: checkpoint, head: head,
                parked: try await GroupTable.parked(name, txn).count)
        }
    }

    /// The events the group parked, in position order.
    public func parked(_ name: String) async throws -> [ParkedEvent] {
        try GroupNames.validate(name, kind: "group")
        try await store.openTables([GroupTable.name])
        return try await store.readTables { txn in
            _ = try await GroupTable.definition(name, txn)
            return try await GroupTable.parked(name, txn)
        }
    }

    /// Marks parked events (the one at `position`, or every one) to be delivered again, to
    /// the member holding their partition, beside the partition's new events; no checkpoint
    /// moves. Acknowledged, a replayed event leaves the parked list. Returns how many were
    /// marked; ``ConsumerGroupError/Code/notFound`` when `position` is not parked.
    @discardableResult
    public func replayParked(_ name: String, position: UInt64? = nil) async throws -> Int {
        try GroupNames.validate(name, kind: "group")
        try await store.openTables([GroupTable.name])
        return try await store.writeTables { txn in
            _ = try await GroupTable.definition(name, txn)
            let parked = try await GroupTable.parked(name, txn).filter { position == nil || $0.position == position }
            if let position, parked.isEmpty {
                throw ConsumerGroupError(.notFound, "The consumer group '\(name)' has no event parked at position \(position); see esctl group parked \(name).")
            }
            for var event in parked {
                event.replay = true
                try await GroupTable.putParked(name, event, txn)
            }
            return parked.count
        }
    }

    /// Joins the group as `member`: its deliveries come as an `AsyncSequence` (see
    /// ``GroupMember``). A member name is unique among the living members of a group: the
    /// same name joining twice shares its leases. `clock` paces the member's polls (each poll
    /// renews its leases and looks for work; an append wakes it at once too). The poll interval
    /// must be at most a third of the group's lease, so that leases never lapse between polls.
    /// Leases expire by the clock the members share: on PostgreSQL the database server's
    /// (`clock_timestamp()`), so members on hosts whose clocks differ still agree; on LMDB the
    /// store's clock of the one machine.
    public func join(
        _ name: String, member: String, pollInterval: Duration = .seconds(1), clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> GroupMember {
        try GroupNames.validate(name, kind: "group")
        try GroupNames.validate(member, kind: "member")
        try await store.openTables([GroupTable.name])
        let (definition, creation) = try await store.readTables { txn in (try await GroupTable.definition(name, txn), try await GroupTable.creation(name, txn) ?? "") }
        guard pollInterval > .zero, pollInterval * 3 <= definition.leaseDuration else {
            throw ConsumerGroupError(
                .invalidInput,
                "The poll interval is more than a third of the group's lease (\(definition.leaseDuration)); poll more often, or create the group with a longer lease.")
        }
        let instance = try await MemberInstance.make(on: store)
        return GroupMember(
            store: store, definition: definition, creation: creation, member: member, instance: instance, pollInterval: pollInterval,
            clock: clock)
    }
}

/// A group's state, as ``ConsumerGroups/status(_:)`` reads it.
public struct GroupStatus: Sendable, Equatable {
    public let definition: GroupDefinition
    /// The members whose membership has not expired, by name.
    public let members: [String]
    public let partitions: [PartitionStatus]
    /// The lowest partition checkpoint: every event through it is settled.
    public let checkpoint: UInt64
    /// The log's head.
    public let head: UInt64
    /// How many events are parked.
    public let parked: Int

    /// How far the checkpoint is behind the head.
    public var lag: UInt64 { head > checkpoint ? head - checkpoint : 0 }
}

/// One partition of a group: who holds it (nil: nobody, or a lease that expired) and its checkpoint.
public struct PartitionStatus: Sendable, Equatable {
    public let partition: Int
    public let member: String?
    public let checkpoint: UInt64
}

/// Times for leases and memberships: microseconds of the clock the members share.
enum GroupClock {
    /// Now, by the clock every member of the store shares, read in `txn`: the database's on a
    /// backend many hosts share (``TableTransaction/sharedClock()``: members on hosts whose
    /// clocks drift apart still agree on when a lease runs out), else the store's clock.
    static func now(_ store: any GroupStore, _ txn: TableTransaction) async throws -> Int64 {
        micros(try await txn.sharedClock() ?? store.configuration.clock())
    }

    static func micros(_ date: Date) -> Int64 {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded(.down)
        guard micros.isFinite else { return 0 }
        return Int64(max(min(micros, 9.2e18), -9.2e18))
    }

    static func micros(_ duration: Duration) -> Int64 {
        duration.components.seconds &* 1_000_000 &+ duration.components.attoseconds / 1_000_000_000_000
    }
}
