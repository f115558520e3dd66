@testable import ConsumerGroups
import EventStore
import EventStoreTesting
import Foundation
import Synchronization
import Testing

/// A date the test moves by hand: leases expire when it says so.
final class ManualNow: Sendable {
    private let date = Mutex(Date(timeIntervalSince1970: 1_767_225_600))
    var now: @Sendable () -> Date { { self.date.withLock { $0 } } }
    func advance(seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

/// The deliveries of one member, gathered by a task of their own.
final class Inbox: Sendable {
    private final class Box: Sendable {
        let list = Mutex<[Delivery]>([])
    }

    private let box = Box()
    private let task: Task<Void, Never>

    init(_ member: GroupMember) {
        let box = self.box
        task = Task {
            do {
                for try await delivery in member { box.list.withLock { $0.append(delivery) } }
            } catch {}
        }
    }

    /// The next delivery, waiting at most `timeout`.
    func next(_ what: String, within timeout: Duration = .seconds(20)) async throws -> Delivery {
        let box = self.box
        return try await withTimeout(timeout, what) {
            while true {
                if let delivery = box.list.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return delivery }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    /// A delivery waiting now, if any.
    func poll() -> Delivery? { box.list.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
}

@Suite("Consumer groups: work shared by members, at least once, in order per key, on every backend")
struct ConsumerGroupConformanceTests {
    func event(_ type: String = "Happened") -> NewEvent { NewEvent(type: type, data: Data("{}".utf8)) }

    @Test("one member receives every event, in order per stream, and the checkpoint reaches the head", arguments: Backend.allCases)
    func deliversInOrder(_ backend: Backend) async throws {
        try await withLog(backend, now: ManualNow().now) { f in
            // Given a group over the log and six events in three streams
            let groups = ConsumerGroups(store: f.log)
            #expect(try await groups.create(GroupDefinition(name: "mail", partitions: 4)))
            #expect(try await !groups.create(GroupDefinition(name: "mail", partitions: 4)), "the same definition again writes nothing")
            for round in 0..<2 { for stream in ["a-1", "a-2", "a-3"] { _ = try await f.log.append(to: stream, events: [event("E\(round)")]) } }
            // When a member acknowledges each delivery
            let member = try await groups.join("mail", member: "m1", pollInterval: .milliseconds(20))
            let inbox = Inbox(member)
            var versions: [String: [UInt64]] = [:]
            for _ in 0..<6 {
                let delivery = try await inbox.next("the next of six deliveries")
                versions[delivery.event.stream, default: []].append(delivery.event.version)
                try await delivery.acknowledge()
            }
            // Then each stream came in order, once
            #expect(versions == ["a-1": [1, 2], "a-2": [1, 2], "a-3": [1, 2]])
            // And the group's checkpoint is the head
            let status = try await waitForCheckpoint(groups, "mail", 6)
            #expect(status.members == ["m1"] && status.lag == 0 && status.parked == 0)
            await member.leave()
            #expect(try await groups.status("mail").members.isEmpty)
            // And another definition of the name is refused
            let error = await #expect(throws: ConsumerGroupError.self) { try await groups.create(GroupDefinition(name: "mail", partitions: 8)) }
            #expect(error?.code == .alreadyExists)
        }
    }

    @Test("a poison event is parked after N tries, the partition goes on, and a replay delivers it again without moving the checkpoint back", arguments: Backend.allCases)
    func poisonParked(_ backend: Backend) async throws {
        try await withLog(backend, now: ManualNow().now) { f in
            // Given a group of one partition that parks after 3 tries, and three events
            let groups = ConsumerGroups(store: f.log)
            try await groups.create(GroupDefinition(name: "charge", partitions: 1, maxTries: 3))
            _ = try await f.log.append(to: "p-1", events: [event("Poison"), event("Fine")])
            _ = try await f.log.append(to: "q-1", events: [event("Fine")])
            let member = try await groups.join("charge", member: "m1", pollInterval: .milliseconds(20))
            let inbox = Inbox(member)
            // When the first event fails three times
            var settlements: [Settlement] = []
            for attempt in 1...3 {
                let delivery = try await inbox.next("try \(attempt) of the poison event")
                #expect(delivery.event.position == 1 && delivery.attempt == attempt)
                settlements.append(try await delivery.nack(.retry))
            }
            // Then it was retried twice and parked the third time
            #expect(settlements == [.retried(tries: 1), .retried(tries: 2), .parked(reason: "failed 3 tries")])
            // And the partition goes on with the next events
            for position in [2, 3] as [UInt64] {
                let delivery = try await inbox.next("the event at position \(position)")
                #expect(delivery.event.position == position && !delivery.isReplay)
                try await delivery.acknowledge()
            }
            _ = try await waitForCheckpoint(groups, "charge", 3)
            let parked = try await groups.parked("charge")
            #expect(parked.map(\.position) == [1] && parked.first?.tries == 3 && parked.first?.reason == "failed 3 tries")
            // When it is replayed, then it is delivered again, marked as a replay
            #expect(try await groups.replayParked("charge", position: 1) == 1)
            let replay = try await inbox.next("the replay of the parked event")
            #expect(replay.event.position == 1 && replay.isReplay)
            try await replay.acknowledge()
            // And it leaves the parked list, while the checkpoint stayed where it was
            #expect(try await groups.parked("charge").isEmpty)
            #expect(try await groups.status("charge").checkpoint == 3)
            let missing = await #expect(throws: ConsumerGroupError.self) { try await groups.replayParked("charge", position: 9) }
            #expect(missing?.code == .notFound)
            await member.leave()
        }
    }

    @Test("a member that leaves: the next one receives only what was not acknowledged, in order", arguments: Backend.allCases)
    func restartRedeliversUnacknowledged(_ backend: Backend) async throws {
        try await withLog(backend, now: ManualNow().now) { f in
            let groups = ConsumerGroups(store: f.log)
            try await groups.create(GroupDefinition(name: "g", partitions: 1))
            _ = try await f.log.append(to: "s-1", events: (0..<5).map { _ in event() })
            // Given a member that acknowledged three events and received the fourth
            let first = try await groups.join("g", member: "m1", pollInterval: .milliseconds(20))
            let inbox = Inbox(first)
            for _ in 0..<3 { try await inbox.next("one of the first three").acknowledge() }
            let fourth = try await inbox.next("the fourth")
            #expect(fourth.event.position == 4)
            // When it leaves without acknowledging it, and another member joins
            await first.leave()
            let second = try await groups.join("g", member: "m2", pollInterval: .milliseconds(20))
            let next = Inbox(second)
            // Then the other receives the fourth and the fifth, nothing before
            let redelivered = try await next.next("the fourth again")
            #expect(redelivered.event.position == 4 && redelivered.attempt == 1)
            try await redelivered.acknowledge()
            let fifth = try await next.next("the fifth")
            #expect(fifth.event.position == 5)
            try await fifth.acknowledge()
            // And the first member's late acknowledgement is refused
            let late = await #expect(throws: ConsumerGroupError.self) { try await fourth.acknowledge() }
            #expect(late?.code == .leaseLost || late?.code == .alreadySettled)
            await second.leave()
        }
    }

    @Test("leases run on the clock members share: the database server's on PostgreSQL (moved by an injected clock's offset), none on LMDB", arguments: Backend.allCases)
    func sharedClock(_ backend: Backend) async throws {
        let manual = ManualNow()
        try await withLog(backend, now: manual.now) { f in
            try await f.log.openTables(["t"])
            // When a transaction asks for the shared clock, with a store clock set to 2026-01-01
            let shared = try await f.log.readTables { txn in try await txn.sharedClock() }
            switch backend {
            case .lmdb:
                // Then an embedded store has none: its processes share one machine's clock
                #expect(shared == nil)
            case .postgres:
                // Then PostgreSQL answers the server's clock_timestamp(), moved as far as the
                // store's clock is from the system's: the injected date, give or take the query
                let answered = try #require(shared)
                #expect(abs(answered.timeIntervalSince(manual.now())) < 60, "the shared clock \(answered) is not near the store's \(manual.now())")
                // And it moves as the store's clock does
                manual.advance(seconds: 3600)
                let later = try #require(try await f.log.readTables { txn in try await txn.sharedClock() })
                #expect(abs(later.timeIntervalSince(answered) - 3600) < 60)
            }
        }
    }

    @Test("a member goes on through a failover: failed polls are tried again, and an acknowledgement whose answer was lost is made again and settled once", arguments: Backend.allCases)
    func memberThroughFailover(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let store = FailingWritesLog(f.log)
            let groups = ConsumerGroups(store: store)
            try await groups.create(GroupDefinition(name: "g", partitions: 1))
            _ = try await f.log.append(to: "s-1", events: [event(), event(), event()])
            let member = try await groups.join("g", member: "m", pollInterval: .milliseconds(20))
            let inbox = Inbox(member)
            let first = try await inbox.next("the first event")
            #expect(first.event.position == 1)
            // When the store is unreachable for the member's next polls (a failover under way)
            store.failNextWrites(5, code: .storeUnavailable)
            try await withTimeout(.seconds(20), "the five failed polls") {
                while store.failedWrites < 5 { try await Task.sleep(for: .milliseconds(10)) }
            }
            // And the first acknowledgement commits but its answer is lost
            store.loseNextAnswers(1)
            try await first.acknowledge()
            // Then the member did not end: it delivers the next events, each once, in order
            let second = try await inbox.next("the second event, after the store came back")
            #expect(second.event.position == 2 && second.attempt == 1)
            try await second.acknowledge()
            let third = try await inbox.next("the third event")
            #expect(third.event.position == 3 && third.attempt == 1)
            try await third.acknowledge()
            // And the group settled each once: its checkpoint is the third, nothing parked
            let status = try await waitForCheckpoint(groups, "g", 3)
            #expect(status.parked == 0)
            #expect(store.failedWrites == 6)
            #expect(inbox.poll() == nil, "nothing is delivered twice")
            await member.leave()
        }
    }

    @Test("a member killed mid-partition: its lease expires, another takes the partition at its checkpoint, nothing skipped or reordered", arguments: Backend.allCases)
    func killedMember(_ backend: Backend) async throws {
        let now = ManualNow()
        try await withLog(backend, now: now.now) { f in
            let groups = ConsumerGroups(store: f.log)
            try await groups.create(GroupDefinition(name: "g", partitions: 1, leaseDuration: .seconds(10)))
            _ = try await f.log.append(to: "x-1", events: (0..<3).map { _ in event() })
            // Given a member that acknowledged the first event and then died holding the second
            let doomed = try await groups.join("g", member: "doomed", pollInterval: .milliseconds(20))
            let inbox = Inbox(doomed)
            try await inbox.next("the first").acknowledge()
            let held = try await inbox.next("the second")
            await doomed.halt()
            // When another member joins, then it receives nothing while the lease holds
            let heir = try await groups.join("g", member: "heir", pollInterval: .milliseconds(20))
            let next = Inbox(heir)
            try await Task.sleep(for: .milliseconds(200))
            #expect(next.poll() == nil, "the partition is still leased")
            // When the lease runs out
            now.advance(seconds: 11)
            // Then the heir receives the second and the third, in order
            let second = try await next.next("the second, after the lease expired")
            #expect(second.event.position == 2)
            try await second.acknowledge()
            let third = try await next.next("the third")
            #expect(third.event.position == 3)
            try await third.acknowledge()
            // And the dead member's settlement is refused: it no longer holds the partition
            let late = await #expect(throws: ConsumerGroupError.self) { try await held.acknowledge() }
            #expect(late?.code == .leaseLost)
            let status = try await waitForCheckpoint(groups, "g", 3)
            #expect(status.members == ["heir"])
            await heir.leave()
        }
    }

    @Test("an acknowledgement shares its transaction with the member's writes: a failure between them leaves neither, so the effect happens once", arguments: Backend.allCases)
    func exactlyOnceEffects(_ backend: Backend) async throws {
        try await withLog(backend, now: ManualNow().now) { f in
            let groups = ConsumerGroups(store: f.log)
            try await groups.create(GroupDefinition(name: "g", partitions: 1))
            try await f.log.openTables(["effects"])
            _ = try await f.log.append(to: "s-1", events: (0..<3).map { _ in event() })
            let member = try await groups.join("g", member: "m1", pollInterval: .milliseconds(20))
            let inbox = Inbox(member)
            struct Crash: Error {}
            for _ in 0..<3 {
                let delivery = try await inbox.next("a delivery")
                let key = Array(String(delivery.event.position).utf8)
                if delivery.event.position == 2 {
                    // When the process fails after writing its effect and before the acknowledgement commits
                    await #expect(throws: Crash.self) {
                        try await delivery.acknowledge { txn in
                            try await txn.put("effects", key, [1])
                            throw Crash()
                        }
                    }
                    // Then neither the effect nor the acknowledgement was written
                    #expect(try await f.log.readTables { try await $0.get("effects", key) } == nil)
                    _ = try await waitForCheckpoint(groups, "g", 1)
                }
                // And acknowledging again writes the effect once, with the acknowledgement
                try await delivery.acknowledge { txn in
                    let count = try await txn.get("effects", key)?.first ?? 0
                    try await txn.put("effects", key, [count + 1])
                }
            }
            _ = try await waitForCheckpoint(groups, "g", 3)
            let effects = try await f.log.readTables { txn in try await ["1", "2", "3"].asyncMap { try await txn.get("effects", Array($0.utf8)) } }
            #expect(effects == [[1], [1], [1]])
            await member.leave()
        }
    }

    @Test("8 members, random retries: each key's events are acknowledged in order, each once (seeded interleavings)", arguments: Backend.allCases)
    func perKeyOrder(_ backend: Backend) async throws {
        try await withLog(backend, now: ManualNow().now) { f in
            var random = SeededGenerator(seed: backend == .lmdb ? 7 : 11)
            let groups = ConsumerGroups(store: f.log)
            try await groups.create(GroupDefinition(name: "g", partitions: 16, maxTries: 1_000))
            // Given 60 events over 10 streams, in a random interleaving
            var versions: [String: UInt64] = [:]
            for _ in 0..<60 {
                let stream = "k-\(Int.random(in: 0..<10, using: &random))"
                versions[stream, default: 0] += 1
                _ = try await f.log.append(to: stream, events: [event()])
            }
            // When 8 members handle them, failing a fifth of the tries at random
            var inboxes: [Inbox] = []
            var members: [GroupMember] = []
            for index in 0..<8 {
                let member = try await groups.join("g", member: "m\(index)", pollInterval: .milliseconds(20))
                members.append(member)
                inboxes.append(Inbox(member))
            }
            var acknowledged: [String: [UInt64]] = [:]
            var count = 0
            try await withTimeout(.seconds(60), "60 events acknowledged by 8 members (\(count) so far)") { [inboxes] in
                var random = SeededGenerator(seed: 99)
                var acks: [String: [UInt64]] = [:]
                var total = 0
                while total < 60 {
                    var progressed = false
                    for inbox in inboxes.shuffled(using: &random) {
                        guard let delivery = inbox.poll() else { continue }
                        progressed = true
                        do {
                            if Int.random(in: 0..<5, using: &random) == 0 {
                                _ = try await delivery.nack(.retry)
                            } else {
                                try await delivery.acknowledge()
                                acks[delivery.event.stream, default: []].append(delivery.event.version)
                                total += 1
                            }
                        } catch let error as ConsumerGroupError where error.code == .leaseLost {
                            // Its partition moved on: the holder delivers it again.
                        }
                    }
                    if !progressed { try await Task.sleep(for: .milliseconds(5)) }
                }
                return acks
            }.forEach { acknowledged[$0.key] = $0.value }
            count = acknowledged.values.reduce(0) { $0 + $1.count }
            // Then every key's events were acknowledged once each, in version order
            for (stream, last) in versions {
                #expect(acknowledged[stream] == Array(1...last), "\(stream): \(acknowledged[stream] ?? [])")
            }
            _ = try await waitForCheckpoint(groups, "g", 60)
            for member in members { await member.leave() }
        }
    }

    @Test("a member restarted under its name takes it back at once from a holder whose process is gone, leases and all; a holder of unknown owner is waited out", arguments: Backend.allCases)
    func restartedMemberTakesItsName(_ backend: Backend) async throws {
        try await withLog(backend, now: ManualNow().now) { f in
            let groups = ConsumerGroups(store: f.log)
            try await groups.create(GroupDefinition(name: "g", partitions: 4))
            // Given a membership "a" and all four leases held, for an hour, by a join whose owner
            // is gone (no process, no database session has that id), as a killed member leaves them
            let now = GroupClock.micros(f.log.configuration.clock())
            let hour = GroupClock.micros(.seconds(3600))
            let dead = "2000000000:\(UUID().uuidString)"
            try await f.log.openTables([GroupTable.name])
            _ = try await f.log.writeTables { txn in
                try await txn.put(GroupTable.name, GroupTable.key(.member, "g", Array("a".utf8)), GroupTable.bytes(UInt64(now + hour)) + Array(dead.utf8))
                for partition in 0..<4 { try await GroupTable.putLease("g", partition: partition, member: "a", expires: now + hour, txn) }
            }
            // When a new "a" joins, before any lease expires, and an event arrives
            let restarted = try await groups.join("g", member: "a", pollInterval: .milliseconds(20))
            _ = try await f.log.append(to: "s-1", events: [event()])
            // Then it is delivered to it: the name, and the leases with it, are its own
            let delivery = try await Inbox(restarted).next("the event, delivered to the restarted member")
            #expect(delivery.event.position == 1)
            try await delivery.acknowledge()
            let status = try await groups.status("g")
            #expect(status.members == ["a"])
            #expect(status.partitions.allSatisfy { $0.member == "a" })
            await restarted.leave()
            // And a membership whose holder's owner is unknown (written before owners were
            // recorded) is not taken: the member is refused until it expires
            _ = try await f.log.writeTables { txn in
                try await txn.put(GroupTable.name, GroupTable.key(.member, "g", Array("b".utf8)), GroupTable.bytes(UInt64(now + hour)) + Array(UUID().uuidString.utf8))
            }
            let waiting = try await groups.join("g", member: "b", pollInterval: .milliseconds(20))
            var iterator = waiting.makeAsyncIterator()
            let refused = await #expect(throws: ConsumerGroupError.self) { _ = try await iterator.next() }
            #expect(refused?.message.contains("named 'b'") == true)
            await waiting.leave()
        }
    }

    @Test("five members share 16 partitions 4, 3, 3, 3, 3; a second living member of one name is refused; a recreated group ends the old members", arguments: Backend.allCases)
    func sharesNamesAndRecreation(_ backend: Backend) async throws {
        try await withLog(backend, now: ManualNow().now) { f in
            let groups = ConsumerGroups(store: f.log)
            try await groups.create(GroupDefinition(name: "g", partitions: 16))
            // Given five members joining one after the other
            var members: [GroupMember] = []
            var inboxes: [Inbox] = []
            for name in ["a", "b", "c", "d", "e"] {
                let member = try await groups.join("g", member: name, pollInterval: .milliseconds(20))
                members.append(member)
                inboxes.append(Inbox(member))
            }
            // Then, once they have polled, each holds its share
            let shares = try await withTimeout(.seconds(20), "the five members' shares to settle") {
                while true {
                    let status = try await groups.status("g")
                    let counts = ["a", "b", "c", "d", "e"].map { name in status.partitions.filter { $0.member == name }.count }
                    if counts == [4, 3, 3, 3, 3] { return counts }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(shares == [4, 3, 3, 3, 3])
            // And a second member named "a" is refused while the first lives
            let twin = try await groups.join("g", member: "a", pollInterval: .milliseconds(20))
            var iterator = twin.makeAsyncIterator()
            let refused = await #expect(throws: ConsumerGroupError.self) { _ = try await iterator.next() }
            #expect(refused?.code == .invalidInput && refused?.message.contains("named 'a'") == true)
            await twin.leave()
            // And the refused twin's leaving takes nothing from the living "a"
            let afterTwin = try await groups.status("g")
            #expect(afterTwin.members.contains("a"))
            #expect(afterTwin.partitions.filter { $0.member == "a" }.count == 4)
            // When the group is deleted and created again, and an event is appended
            try await groups.delete("g")
            try await groups.create(GroupDefinition(name: "g", partitions: 16))
            _ = try await f.log.append(to: "s-1", events: [event()])
            // Then a new member receives it: the old ones, whose group is gone, took nothing of the new one
            let fresh = try await groups.join("g", member: "f", pollInterval: .milliseconds(20))
            let delivery = try await Inbox(fresh).next("the new group's first event")
            #expect(delivery.event.position == 1)
            try await delivery.acknowledge()
            #expect(try await groups.status("g").members == ["f"])
            // (An old member may have read the new event in the moment its group was recreated;
            // it cannot settle it: the delivery belongs to a group it never joined.)
            for inbox in inboxes {
                while let stale = inbox.poll() {
                    let refused = await #expect(throws: ConsumerGroupError.self) { try await stale.acknowledge() }
                    #expect(refused?.code == .notFound || refused?.code == .leaseLost || refused?.code == .alreadySettled)
                }
            }
            _ = try await waitForCheckpoint(groups, "g", 1)
            await fresh.leave()
            for member in members { await member.leave() }
        }
    }

    /// Waits until the group's checkpoint reaches `position` (it moves as partitions settle).
    func waitForCheckpoint(_ groups: ConsumerGroups, _ name: String, _ position: UInt64) async throws -> GroupStatus {
        try await withTimeout(.seconds(20), "the checkpoint of '\(name)' to reach \(position)") {
            while true {
                let status = try await groups.status(name)
                if status.checkpoint >= position { return status }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }
}
