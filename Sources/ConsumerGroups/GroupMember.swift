import EventStoreCore
import Foundation
import Synchronization

/// A member of a consumer group: an `AsyncSequence` of ``Delivery`` values (iterate it once).
/// While it runs it renews its membership and its partitions' leases at each poll, takes its
/// fair share of the partitions (free ones, and those whose holder stopped renewing), gives
/// back idle ones above its share when others join, and hands out, per partition it holds and
/// one at a time, the next event after the partition's checkpoint. ``leave()`` (or ending the
/// iteration) stops it and gives its partitions back at once; deliveries handed out before then
/// can no longer be settled (``ConsumerGroupError/Code/leaseLost``). A member that simply stops
/// (its process killed) keeps its partitions until its leases expire.
public final class GroupMember: AsyncSequence, Sendable {
    public typealias Element = Delivery
    public typealias AsyncIterator = AsyncThrowingStream<Delivery, any Error>.Iterator

    /// The member's name.
    public let name: String
    let core: MemberCore
    private let deliveries: AsyncThrowingStream<Delivery, any Error>
    private let task: Task<Void, Never>

    init(
        store: any GroupStore, definition: GroupDefinition, creation: String, member: String, instance: String,
        pollInterval: Duration, clock: any Clock<Duration>
    ) {
        name = member
        let core = MemberCore(
            store: store, definition: definition, creation: creation, member: member, instance: instance,
            pollInterval: pollInterval, clock: clock)
        self.core = core
        let (stream, continuation) = AsyncThrowingStream<Delivery, any Error>.makeStream()
        deliveries = stream
        let task = Task { await core.run(continuation) }
        self.task = task
        // Ending the iteration leaves the group: its partitions go to the others at once.
        continuation.onTermination = { _ in
            task.cancel()
            Task {
                await task.value
                await core.release()
            }
        }
    }

    deinit {
        task.cancel()
    }

    public func makeAsyncIterator() -> AsyncIterator { deliveries.makeAsyncIterator() }

    /// Stops the member: no more deliveries; its membership and leases are removed so that
    /// other members take its partitions at their next poll. Its unsettled deliveries are
    /// delivered again by the next holder.
    public func leave() async {
        task.cancel()
        await task.value
        await core.release()
    }

    /// Stops without giving anything back, as a member whose process was killed: its leases
    /// stay until they expire (for tests of what the other members then do).
    package func halt() async {
        await core.keepLeases()
        task.cancel()
        await task.value
    }
}

/// The member's state and work, one step at a time (an actor: deliveries settle from any task).
actor MemberCore {
    enum Outcome: Sendable, Equatable {
        case acknowledge, retry, skip
        case park(String)
    }

    let store: any GroupStore
    let definition: GroupDefinition
    /// The id the group was created with: a group deleted and created again under the same
    /// name is another group, which this member must not work on with what it knew of the first.
    let creation: String
    let member: String
    /// This join's own id: another living member of the same name is refused.
    let instance: String
    let pollInterval: Duration
    let clock: any Clock<Duration>
    private let wake = WakeUp()
    /// The partitions held at the last poll, with their checkpoints.
    private var owned: [Int: UInt64] = [:]
    /// The position outstanding in each partition.
    private var inFlight: [Int: UInt64] = [:]
    /// Partitions whose delivery failed: they wait for the next poll.
    private var cooling = Set<Int>()
    /// The positions of the parked events delivered again and not settled yet (below their
    /// partitions' checkpoints, unlike every other delivery).
    private var replaying = Set<UInt64>()
    /// The positions settled since the current step began (its renewal may have read before them).
    private var settledDuringStep = Set<UInt64>()
    /// The replays the current step took (partition, position): handed to nobody when the step
    /// fails, so given back then (``dropStepReplays()``).
    private var stepReplays: [(partition: Int, position: UInt64)] = []

    init(
        store: any GroupStore, definition: GroupDefinition, creation: String, member: String, instance: String, pollInterval: Duration,
        clock: any Clock<Duration>
    ) {
        self.store = store
        self.definition = definition
        self.creation = creation
        self.instance = instance
        MemberInstance.started(instance)
        self.member = member
        self.pollInterval = pollInterval
        self.clock = clock
    }

    private var group: String { definition.name }

    func run(_ continuation: AsyncThrowingStream<Delivery, any Error>.Continuation) async {
        let wake = self.wake
        let store = self.store
        let (clock, interval) = (self.clock, pollInterval)
        let watcher = Task {
            var last = (try? await store.headPosition()) ?? 0
            while !Task.isCancelled {
                do {
                    last = try await store.waitForCommit(after: last)
                    wake.fire()
                } catch {
                    // The store unreachable for a while (a failover): the polls go on meanwhile.
                    do { try await clock.sleep(for: interval) } catch { return }
                }
            }
        }
        // The polls tick whatever wakes the member meanwhile, so that a stream of appends never
        // holds back renewals or retries.
        let ticker = Task {
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                wake.tick()
            }
        }
        defer {
            watcher.cancel()
            ticker.cancel()
        }
        var failedSteps = 0
        while !Task.isCancelled {
            do {
                let deliveries = try await step(fromTimer: wake.takeTick())
                if failedSteps > 0 {
                    store.configuration.logger.notice(
                        "a consumer-group member reached the store again and resumed at its checkpoints",
                        metadata: ["group": "\(group)", "member": "\(member)", "failedPolls": "\(failedSteps)"])
                    failedSteps = 0
                }
                for delivery in deliveries { continuation.yield(delivery) }
            } catch {
                // Left (cancelled): the sequence ends. The store unreachable for a while (a
                // failover, a partition): the member tries again at each poll, keeping what it
                // holds until its leases lapse. Any other failure ends it with the error.
                guard !Task.isCancelled, Self.isTransient(error) else {
                    if Task.isCancelled { continuation.finish() } else { continuation.finish(throwing: error) }
                    return
                }
                dropStepReplays()
                if failedSteps == 0 {
                    store.configuration.logger.warning(
                        "a consumer-group member cannot reach the store; it tries again at each poll",
                        metadata: ["group": "\(group)", "member": "\(member)", "reason": "\(error)"])
                }
                failedSteps += 1
            }
            await wake.wait()
        }
        continuation.finish()
    }

    // MARK: One step

    /// Whether a renewal has succeeded: the name is this join's.
    private var hasRenewed = false

    /// The join holding this member's name, when it is another one, still within its lease, and
    /// provably gone (``MemberInstance/isDead(_:on:)``); nil otherwise.
    private func deadHolderOfName() async throws -> String? {
        let key = GroupTable.key(.member, group, Array(member.utf8))
        // Read through the writer, as every other access of the member is: the group's table
        // is opened there, and no cooperative thread waits for a read meanwhile.
        let (holder, now) = try await store.writeTables { [store] txn in
            let holder = try await txn.withValue(GroupTable.name, key) {
                (Int64(bitPattern: GroupTable.uint64($0)), String(decoding: $0.dropFirst(8), as: UTF8.self))
            }
            return (holder, try await GroupClock.now(store, txn))
        }
        guard let holder, holder.1 != instance, holder.0 > now else { return nil }
        guard await MemberInstance.isDead(holder.1, on: store) else { return nil }
        // A holder that still renews is alive whatever its owner looks like (a PostgreSQL owner
        // session that dropped for a moment, a process in another pid namespace): over one poll
        // interval its membership must not move.
        try await clock.sleep(for: pollInterval)
        let again = try await store.writeTables { txn in
            try await txn.withValue(GroupTable.name, key) { (Int64(bitPattern: GroupTable.uint64($0)), String(decoding: $0.dropFirst(8), as: UTF8.self)) }
        }
        guard let again, again == holder else { return nil }
        return holder.1
    }

    /// Renews, takes and gives back leases, then finds each idle partition's next event.
    func step(fromTimer: Bool) async throws -> [Delivery] {
        if fromTimer { cooling.removeAll() }
        let busy = Set(inFlight.keys)
        settledDuringStep.removeAll()
        stepReplays.removeAll()
        // Until its first renewal, a member may take its name from a holder that is provably dead.
        let replacing = hasRenewed ? nil : try await deadHolderOfName()
        let (held, tries, replays) = try await store.writeTables { [store, definition, creation, member, instance] txn in
            try await Self.renew(
                definition, creation: creation, member: member, instance: instance, replacing: replacing, now: try await GroupClock.now(store, txn), busy: busy, txn)
        }
        if !hasRenewed, let replacing {
            store.configuration.logger.notice(
                "a consumer-group member took its name back from a holder that is gone",
                metadata: ["group": "\(group)", "member": "\(member)", "previous": "\(replacing)"])
        }
        hasRenewed = true
        // Settlements may have committed while the renewal was under way (the actor runs them
        // at each await): what this member knows of its partitions is never older than the
        // renewal's read, and checkpoints only rise.
        let known = owned
        owned = held.reduce(into: [:]) { result, entry in result[entry.key] = max(entry.value, known[entry.key] ?? 0) }
        // Partitions lost, and deliveries settled by another holder since (a partition taken
        // back after its lease lapsed): nothing of them is outstanding here any more.
        for (partition, position) in inFlight where owned[partition].map({ position <= $0 && !replaying.contains(position) }) ?? true {
            inFlight[partition] = nil
        }
        var deliveries: [Delivery] = []
        for parked in replays where owned[parked.partition] != nil && inFlight[parked.partition] == nil
            && !settledDuringStep.contains(parked.position) && !cooling.contains(parked.partition)
        {
            guard let event = try await store.event(at: parked.position) else {
                // Its event was deleted since it was parked: nothing is left to replay.
                _ = try await store.writeTables { [definition] txn in
                    try await txn.delete(GroupTable.name, GroupTable.key(.parked, definition.name, position: parked.position))
                }
                continue
            }
            inFlight[parked.partition] = parked.position
            replaying.insert(parked.position)
            stepReplays.append((parked.partition, parked.position))
            deliveries.append(Delivery(event: event, partition: parked.partition, attempt: (tries[parked.position] ?? 0) + 1, isReplay: true, member: self))
        }
        let idle = owned.keys.filter { inFlight[$0] == nil && !cooling.contains($0) }
        guard let from = idle.compactMap({ owned[$0] }).min() else { return deliveries }
        let (picked, scannedThrough) = try await nextEvents(for: Set(idle), after: from)
        let advanced = idle.filter { picked[$0] == nil && (owned[$0] ?? 0) < scannedThrough && inFlight[$0] == nil }
        if !advanced.isEmpty {
            try await store.writeTables { [store, definition, member] txn in
                let now = try await GroupClock.now(store, txn)
                for partition in advanced {
                    guard try await Self.holds(definition, partition, member: member, now: now, txn) else { continue }
                    try await Self.raiseCheckpoint(definition, partition, to: scannedThrough, txn)
                }
            }
            for partition in advanced { owned[partition] = scannedThrough }
        }
        // Settlements and renewals during the reads above: deliver only what is still next.
        for (partition, event) in picked.sorted(by: { $0.value.position < $1.value.position })
        where inFlight[partition] == nil && owned[partition].map({ event.position > $0 }) == true {
            inFlight[partition] = event.position
            deliveries.append(Delivery(event: event, partition: partition, attempt: (tries[event.position] ?? 0) + 1, isReplay: false, member: self))
        }
        return deliveries
    }

    /// The first event after its checkpoint of each partition in `partitions`, reading the
    /// group's events a page at a time from `after` (at most 4,096 events a step), and the last
    /// position read.
    private func nextEvents(for partitions: Set<Int>, after: UInt64) async throws -> (picked: [Int: RecordedEvent], scannedThrough: UInt64) {
        let head = try await store.headPosition()
        var picked: [Int: RecordedEvent] = [:]
        var scanned = after
        var examined = 0
        while picked.count < partitions.count, scanned < head, examined < 4_096 {
            let pageSize = 256
            let page: [RecordedEvent]
            switch definition.source {
            case .log: page = try await store.read(from: scanned + 1, through: head, limit: pageSize, filter: .all)
            case let .category(category): page = try await store.read(from: scanned + 1, through: head, limit: pageSize, filter: EventFilter(category: category))
            case let .query(query): page = try await store.read(query, after: scanned, limit: pageSize).events.filter { $0.position <= head }
            }
            for event in page {
                let partition = definition.partition(of: event)
                if partitions.contains(partition), picked[partition] == nil, event.position > (owned[partition] ?? 0) { picked[partition] = event }
            }
            examined += max(page.count, 1)
            if page.count < pageSize {
                scanned = head
                break
            }
            scanned = page.last?.position ?? head
        }
        // A partition picked has not been read past its event: only the others advance.
        return (picked, scanned)
    }

    /// Gives back the replays a failed step took: its deliveries reached nobody, and a replay
    /// outstanding would hold its partition for good (a replay is never cleared by a renewal).
    private func dropStepReplays() {
        for (partition, position) in stepReplays {
            if inFlight[partition] == position { inFlight[partition] = nil }
            replaying.remove(position)
        }
        stepReplays.removeAll()
    }

    // MARK: Settling

    func settle(_ delivery: Delivery, _ outcome: Outcome, alsoWriting body: (@Sendable (TableTransaction) async throws -> Void)?) async throws -> Settlement {
        try checkOutstanding(delivery)
        var settlement: Settlement?
        var failures = 0
        while settlement == nil {
            do {
                settlement = try await store.writeTables { [store, definition, creation, member] txn in
                    let settlement = try await Self.record(
                        delivery.event, delivery.partition, delivery.isReplay, outcome, definition, creation: creation, member: member,
                        attempt: delivery.attempt, now: try await GroupClock.now(store, txn), txn)
                    try await body?(txn)
                    return settlement
                }
            } catch let error as ConsumerGroupError where error.code == .alreadySettled && failures > 0 {
                // Made again after the store was unreachable, still holding the partition, and
                // found settled: by the try whose answer was lost (only the holder settles).
                settlement = Self.settlement(outcome, attempt: delivery.attempt)
            } catch let error as ConsumerGroupError where error.code == .leaseLost && failures > 0 {
                // The lease lapsed while the store was unreachable: the settlement may have been
                // made by the try whose answer was lost, or not; the next holder settles it if not.
                forget(delivery)
                guard try await isSettled(delivery) else { throw error }
                throw ConsumerGroupError(
                    .leaseLost,
                    "This member no longer holds partition \(delivery.partition) of '\(group)', and the delivery of position \(delivery.event.position) is settled: by this member's try whose answer was lost while the store was unreachable, or by the member holding the partition now.")
            } catch let error as ConsumerGroupError where error.code == .leaseLost || error.code == .alreadySettled {
                forget(delivery)
                throw error
            } catch where Self.isTransient(error) && failures < settleRetries && !Task.isCancelled {
                // The store unreachable (a failover): made again at each poll while the lease
                // may still hold; a commit whose answer was lost is then found settled.
                failures += 1
                store.configuration.logger.notice(
                    "a consumer-group settlement failed as the store was unreachable; making it again",
                    metadata: ["group": "\(group)", "member": "\(member)", "position": "\(delivery.event.position)", "reason": "\(error)"])
                try await clock.sleep(for: pollInterval)
            }
        }
        guard let settlement else { throw CancellationError() }
        settled(delivery, settlement)
        return settlement
    }

    /// Whether `delivery` is settled: its partition's checkpoint reached it (a replay: its parked
    /// entry is gone).
    private func isSettled(_ delivery: Delivery) async throws -> Bool {
        try await store.writeTables { [definition] txn in
            if delivery.isReplay {
                return try await txn.get(GroupTable.name, GroupTable.key(.parked, definition.name, position: delivery.event.position)) == nil
            }
            let checkpoint = try await txn.withValue(
                GroupTable.name, GroupTable.key(.checkpoint, definition.name, partition: delivery.partition)) { GroupTable.uint64($0) } ?? 0
            return delivery.event.position <= checkpoint
        }
    }

    /// The settlement `outcome` made of the delivery of `attempt`, when it is found made.
    private static func settlement(_ outcome: Outcome, attempt: Int) -> Settlement {
        switch outcome {
        case .acknowledge: return .acknowledged
        case .skip: return .skipped
        case let .park(reason): return .parked(reason: reason)
        // A retry found settled was the last try: it parked the event.
        case .retry: return .parked(reason: "failed \(attempt) tries")
        }
    }

    /// How many times a settlement is made again after the store was unreachable: one poll
    /// apart, for about a lease (after which another member may hold the partition), at least 3.
    private var settleRetries: Int {
        max(3, Int((definition.leaseDuration / pollInterval).rounded(.down)))
    }

    /// Whether `error` says the store is unreachable for a while (a failover, a partition), so
    /// that the same work may be tried again: the store unavailable, or an append's outcome unknown.
    static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? EventStoreError else { return false }
        return error.code == .storeUnavailable || error.code == .outcomeUnknown
    }

    func acknowledge(_ delivery: Delivery, appending appends: [StreamAppend]) async throws -> [AppendResult] {
        try checkOutstanding(delivery)
        let results: [AppendResult]
        do {
            let record: @Sendable (TableTransaction) async throws -> Void = { [store, definition, creation, member] txn in
                _ = try await Self.record(
                    delivery.event, delivery.partition, delivery.isReplay, .acknowledge, definition, creation: creation, member: member,
                    attempt: delivery.attempt, now: try await GroupClock.now(store, txn), txn)
            }
            results = try await store.append(appends) { txn, _ in try await record(txn) }
            // A repeat whose events were recorded before (a delivery repeated after a lost lease)
            // wrote nothing, and so no acknowledgement either. Its events commit only with an
            // acknowledgement of this delivery, so when that is settled already, it is the one
            // they came with (made by an append whose answer a failover lost, and made again by
            // the store): the effect happened once, and this acknowledgement stands.
            if results.allSatisfy(\.alreadyRecorded) {
                do {
                    try await store.writeTables { txn in try await record(txn) }
                } catch let error as ConsumerGroupError where error.code == .alreadySettled {}
            }
        } catch let error as ConsumerGroupError where error.code == .leaseLost || error.code == .alreadySettled {
            forget(delivery)
            throw error
        }
        settled(delivery, .acknowledged)
        return results
    }

    /// A delivery that can no longer be settled here leaves its partition free for the next step.
    private func forget(_ delivery: Delivery) {
        if inFlight[delivery.partition] == delivery.event.position { inFlight[delivery.partition] = nil }
        if delivery.isReplay { replaying.remove(delivery.event.position) }
        wake.fire()
    }

    private func checkOutstanding(_ delivery: Delivery) throws {
        guard inFlight[delivery.partition] == delivery.event.position else {
            if owned[delivery.partition] == nil {
                throw ConsumerGroupError(
                    .leaseLost, "This member no longer holds partition \(delivery.partition) of '\(group)'; the member holding it delivers the event again.")
            }
            throw ConsumerGroupError(.alreadySettled, "The delivery of position \(delivery.event.position) was settled already.")
        }
    }

    private func settled(_ delivery: Delivery, _ settlement: Settlement) {
        // A step may have seen this settlement committed and handed out the partition's next
        // event already: only this delivery's own entry goes.
        if inFlight[delivery.partition] == delivery.event.position { inFlight[delivery.partition] = nil }
        if delivery.isReplay { replaying.remove(delivery.event.position) }
        settledDuringStep.insert(delivery.event.position)
        switch settlement {
        case .retried:
            cooling.insert(delivery.partition)
        case .acknowledged, .skipped, .parked:
            if !delivery.isReplay { owned[delivery.partition] = max(owned[delivery.partition] ?? 0, delivery.event.position) }
        }
        wake.fire()
    }

    /// Whether ending keeps the leases (``GroupMember/halt()``).
    private var keepsLeases = false

    func keepLeases() { keepsLeases = true }

    /// Removes the membership and the leases held (leaving).
    /// Once: ``GroupMember/leave()`` and the end of the iteration may both ask, and whoever asks
    /// second waits for the first, so that nothing touches the store after `leave()` returns.
    func release() async {
        if let releasing {
            await releasing.value
            return
        }
        inFlight.removeAll()
        replaying.removeAll()
        owned.removeAll()
        let (store, definition, member, keepsLeases) = (self.store, self.definition, self.member, self.keepsLeases)
        let instance = self.instance
        MemberInstance.ended(instance)
        let task = Task {
            guard !keepsLeases else { return }
            _ = try? await store.writeTables { txn in
                // Only this join's own name and leases: a twin that was refused holds neither.
                let memberKey = GroupTable.key(.member, definition.name, Array(member.utf8))
                let holder = try await txn.withValue(GroupTable.name, memberKey) { String(decoding: $0.dropFirst(8), as: UTF8.self) }
                guard holder == instance else { return }
                _ = try await txn.delete(GroupTable.name, memberKey)
                for (partition, lease) in try await GroupTable.leases(definition.name, txn) where lease.member == member {
                    _ = try await txn.delete(GroupTable.name, GroupTable.key(.lease, definition.name, partition: partition))
                }
            }
        }
        releasing = task
        await task.value
    }

    private var releasing: Task<Void, Never>?

    // MARK: In the transaction

    /// Renews the membership, drops expired members, gives back idle partitions above the fair
    /// share, takes free or expired ones up to it, and renews every lease held. Returns the
    /// partitions held with their checkpoints, the tries recorded, and the parked events to
    /// replay in those partitions.
    /// `replacing`: a holder of the name found dead before the transaction, whose membership (and
    /// leases, which go with the name) this join takes if it still holds the name.
    static func renew(
        _ definition: GroupDefinition, creation: String, member: String, instance: String, replacing: String? = nil, now: Int64,
        busy: Set<Int>, _ txn: TableTransaction
    ) async throws -> (held: [Int: UInt64], tries: [UInt64: Int], replays: [ParkedEvent]) {
        let group = definition.name
        try await checkCreation(definition, creation, txn)
        let memberKey = GroupTable.key(.member, group, Array(member.utf8))
        if let other = try await txn.withValue(GroupTable.name, memberKey, { (Int64(bitPattern: GroupTable.uint64($0)), String(decoding: $0.dropFirst(8), as: UTF8.self)) }),
            other.1 != instance, other.1 != replacing, other.0 > now
        {
            throw ConsumerGroupError(
                .invalidInput,
                "Another living member of '\(group)' is named '\(member)'; give each member its own name (or wait for its lease to expire).")
        }
        let expires = now &+ GroupClock.micros(definition.leaseDuration)
        try await txn.put(GroupTable.name, memberKey, GroupTable.bytes(UInt64(bitPattern: expires)) + Array(instance.utf8))
        var members = try await GroupTable.members(group, txn)
        for (name, until) in members where until <= now {
            _ = try await txn.delete(GroupTable.name, GroupTable.key(.member, group, Array(name.utf8)))
            members[name] = nil
        }
        // Each living member's share: the partitions divided evenly, the first (by name) taking
        // one more while some are left over, so that the shares add up to the partitions.
        let names = members.keys.sorted()
        let rank = names.firstIndex(of: member) ?? 0
        let share = definition.partitions / max(names.count, 1) + (rank < definition.partitions % max(names.count, 1) ? 1 : 0)
        let leases = try await GroupTable.leases(group, txn)
        var mine = leases.filter { $0.value.member == member && $0.value.expires > now }.map(\.key).sorted()
        while mine.count > share, let index = mine.lastIndex(where: { !busy.contains($0) }) {
            _ = try await txn.delete(GroupTable.name, GroupTable.key(.lease, group, partition: mine[index]))
            mine.remove(at: index)
        }
        for partition in 0..<definition.partitions where mine.count < share && !mine.contains(partition) {
            if let lease = leases[partition], lease.expires > now, lease.member != member { continue }
            mine.append(partition)
        }
        for partition in mine { try await GroupTable.putLease(group, partition: partition, member: member, expires: expires, txn) }
        let checkpoints = try await GroupTable.checkpoints(group, partitions: definition.partitions, txn)
        let held = Dictionary(uniqueKeysWithValues: mine.map { ($0, checkpoints[$0]) })
        let replays = try await GroupTable.parked(group, txn).filter { $0.replay && held[$0.partition] != nil }
        return (held, try await GroupTable.tries(group, txn), replays)
    }

    /// Refuses a group deleted (or deleted and created again) since the member joined.
    static func checkCreation(_ definition: GroupDefinition, _ creation: String, _ txn: TableTransaction) async throws {
        guard try await GroupTable.creation(definition.name, txn) == creation else {
            throw ConsumerGroupError(
                .notFound, "The consumer group '\(definition.name)' was deleted (or deleted and created again) since this member joined; join it again.")
        }
    }

    /// Whether `member` holds `partition` now.
    static func holds(_ definition: GroupDefinition, _ partition: Int, member: String, now: Int64, _ txn: TableTransaction) async throws -> Bool {
        let key = GroupTable.key(.lease, definition.name, partition: partition)
        guard let lease = try await txn.withValue(GroupTable.name, key, { (GroupTable.uint64($0), $0.dropFirst(8).elementsEqual(member.utf8)) }) else {
            return false
        }
        return lease.1 && Int64(bitPattern: lease.0) > now
    }

    static func raiseCheckpoint(_ definition: GroupDefinition, _ partition: Int, to position: UInt64, _ txn: TableTransaction) async throws {
        let key = GroupTable.key(.checkpoint, definition.name, partition: partition)
        let current = try await txn.withValue(GroupTable.name, key) { GroupTable.uint64($0) } ?? 0
        if position > current { try await txn.put(GroupTable.name, key, GroupTable.bytes(position)) }
    }

    /// Records a settlement: the member must hold the partition now.
    static func record(
        _ event: RecordedEvent, _ partition: Int, _ isReplay: Bool, _ outcome: Outcome, _ definition: GroupDefinition, creation: String,
        member: String, attempt: Int, now: Int64, _ txn: TableTransaction
    ) async throws -> Settlement {
        let group = definition.name
        try await checkCreation(definition, creation, txn)
        guard try await holds(definition, partition, member: member, now: now, txn) else {
            throw ConsumerGroupError(
                .leaseLost, "This member no longer holds partition \(partition) of '\(group)'; the member holding it delivers the event again.")
        }
        // A settlement recorded already (a delivery repeated from a stale read) records nothing
        // again: its effects, written with it, must not happen twice.
        if isReplay {
            guard try await txn.get(GroupTable.name, GroupTable.key(.parked, group, position: event.position)) != nil else {
                throw ConsumerGroupError(.alreadySettled, "The replay of position \(event.position) was settled already.")
            }
        } else {
            let checkpoint = try await txn.withValue(GroupTable.name, GroupTable.key(.checkpoint, group, partition: partition)) { GroupTable.uint64($0) } ?? 0
            guard event.position > checkpoint else {
                throw ConsumerGroupError(.alreadySettled, "The delivery of position \(event.position) was settled already.")
            }
        }
        let triesKey = GroupTable.key(.tries, group, position: event.position)
        let failed = try await txn.withValue(GroupTable.name, triesKey) { $0.count >= 4 ? Int(UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self))) : 0 } ?? 0
        func done() async throws {
            _ = try await txn.delete(GroupTable.name, triesKey)
            if isReplay {
                _ = try await txn.delete(GroupTable.name, GroupTable.key(.parked, group, position: event.position))
            } else {
                try await raiseCheckpoint(definition, partition, to: event.position, txn)
            }
        }
        func park(_ reason: String, tries: Int) async throws -> Settlement {
            _ = try await txn.delete(GroupTable.name, triesKey)
            try await GroupTable.putParked(
                group, ParkedEvent(position: event.position, stream: event.stream, type: event.type, partition: partition, reason: reason, tries: tries, replay: false),
                txn)
            if !isReplay { try await raiseCheckpoint(definition, partition, to: event.position, txn) }
            return .parked(reason: reason)
        }
        switch outcome {
        case .acknowledge:
            try await done()
            return .acknowledged
        case .skip:
            try await done()
            return .skipped
        case let .park(reason):
            return try await park(reason, tries: failed)
        case .retry:
            // This attempt's failure recorded already (a retry made again after its commit's
            // answer was lost): counted once.
            if failed >= attempt { return .retried(tries: failed) }
            let tries = failed + 1
            if tries >= definition.maxTries { return try await park("failed \(tries) tries", tries: tries) }
            try await GroupTable.putTries(group, position: event.position, tries: tries, txn)
            return .retried(tries: tries)
        }
    }
}

/// Wakes a waiting member: an append, a settlement, a poll's tick. A wake with nobody waiting
/// is kept for the next wait; a tick is kept until the member takes it.
final class WakeUp: Sendable {
    private let state = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    /// Whether a poll interval passed since the member last looked (true at first: a first poll).
    private let ticked = Mutex(true)

    /// A poll interval passed: noted, and the member woken.
    func tick() {
        ticked.withLock { $0 = true }
        fire()
    }

    /// Whether a poll interval passed since the last call.
    func takeTick() -> Bool {
        ticked.withLock { ticked in
            defer { ticked = false }
            return ticked
        }
    }

    func fire() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            fire()
        }
    }
}
