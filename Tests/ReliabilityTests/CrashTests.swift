import Apps
import Commands
import EventStore
import Foundation
import Projections
import Testing
import TestSupport

/// Kill a writer with SIGKILL at random moments, again and again, and check after each kill:
/// every acknowledged append is there with its exact bytes, nothing unacknowledged is half
/// there, the store verifies clean, and projections catch up to the hash of a fresh fold.
///
/// CI runs 100 kills; `CRASH_KILLS=1000 swift test --filter CrashTests` runs a long one
/// (scripts/crash-test.sh).
@Suite("Crash safety", .serialized)
struct CrashTests {
    static var kills: Int { Int(ProcessInfo.processInfo.environment["CRASH_KILLS"] ?? "") ?? 100 }
    static let seed: UInt64 = 7
    static var writer: URL { ProcessRunner.productsDirectory.appendingPathComponent("torture-writer") }

    /// What the writer said before it died.
    struct Acknowledged {
        var batches: [UInt64: (first: UInt64, count: Int)] = [:]
        var last: UInt64 = 0
    }

    func acknowledged(_ lines: [String]) -> Acknowledged {
        var acknowledged = Acknowledged()
        for line in lines {
            let parts = line.split(separator: " ")
            guard parts.count == 4, parts[0] == "ACK", let batch = UInt64(parts[1]), let first = UInt64(parts[2]), let count = Int(parts[3]) else {
                continue  // a line cut by the kill
            }
            acknowledged.batches[batch] = (first, count)
            acknowledged.last = max(acknowledged.last, batch)
        }
        return acknowledged
    }

    @Test("SIGKILL at random moments loses nothing acknowledged and leaves nothing half-written", arguments: [Durability.full, .noMetaSync])
    func killTheWriter(durability: Durability) async throws {
        let directory = try TemporaryDirectory(prefix: "crash")
        let db = directory.appending("store")
        var random = SystemRandomNumberGenerator()
        var allAcknowledged: [UInt64: (first: UInt64, count: Int)] = [:]
        var nextBatch: UInt64 = 1
        var killed = 0
        var checkedEvents = 0
        for _ in 0..<(Self.kills / 2) {
            // Start the writer where the store ends, let it run a little, kill it mid-flight.
            let child = try RunningProcess(
                Self.writer, ["append", "--db", db, "--durability", durability == .full ? "full" : "noMetaSync", "--start", String(nextBatch), "--seed", String(Self.seed)])
            try await child.waitForStdoutLines(Int.random(in: 1...12, using: &random))
            try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000, using: &random)))
            child.send(SIGKILL)
            _ = try await child.waitForExit()
            killed += 1
            let acknowledged = acknowledged(child.stdoutLines)
            allAcknowledged.merge(acknowledged.batches) { _, new in new }

            // Reopen and check everything.
            let store = try EventStore(path: db)
            let report = try store.verify()
            #expect(report.isClean, "after kill \(killed): \(report.problems)")
            let events = try store.read(limit: .max)
            var byBatch: [UInt64: [RecordedEvent]] = [:]
            for event in events {
                let batch = try #require(JSONValue(parsing: Array(event.data))["batch"]?.intValue)
                byBatch[UInt64(batch), default: []].append(event)
            }
            // Every batch in the store is whole and byte-exact; every acknowledged batch is in it.
            for (batch, stored) in byBatch {
                let expected = TortureBatch.appends(seed: Self.seed, batch: batch).flatMap { part in part.events.map { (part.stream, $0) } }
                #expect(stored.count == expected.count, "batch \(batch) is \(stored.count) of \(expected.count) events")
                for (event, (stream, original)) in zip(stored, expected) {
                    #expect(event.id == original.id && event.stream == stream && event.type == original.type)
                    #expect(event.data == original.data && event.metadata == original.metadata, "batch \(batch) has other bytes")
                }
                checkedEvents += stored.count
            }
            for (batch, ack) in allAcknowledged {
                let stored = byBatch[batch] ?? []
                #expect(stored.count == ack.count, "acknowledged batch \(batch) is missing (\(durability))")
                #expect(stored.first?.position == ack.first)
            }
            // Projections catch up to exactly what a fresh fold gives.
            let runner = try await ProjectionRunner(store: store, projections: AppCatalog.logSummaries)
            let head = try await runner.catchUp()
            for projection in AppCatalog.logSummaries {
                let folded = try await StateHash.of(projection, in: try runner.state(of: projection.name, asOf: head).reader)
                #expect(try await runner.storedHash(of: projection.name) == folded, "\(projection.name) after kill \(killed)")
            }
            nextBatch = (byBatch.keys.max() ?? 0) + 1
            await store.close()
        }
        #expect(killed == Self.kills / 2)
        // The figures RELIABILITY.md quotes (scripts/crash-test.sh picks these lines out).
        print("figures: \(durability): \(killed) kills survived, \(allAcknowledged.count) acknowledged batches present, \(checkedEvents) stored events checked byte for byte")
    }

    @Test("a kill during deletions, trims and purges leaves every acknowledged deletion whole, ids known, positions increasing, rebuild == live")
    func killDuringDeletions() async throws {
        let directory = try TemporaryDirectory(prefix: "crash-deletions")
        let db = directory.appending("store")
        var random = SystemRandomNumberGenerator()
        var lastHead: UInt64 = 0
        var checked = 0
        for round in 1...10 {
            let child = try RunningProcess(Self.writer, ["delete", "--db", db, "--round", String(round)])
            try await child.waitForStdoutLines(Int.random(in: 3...30, using: &random))
            try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000, using: &random)))
            child.send(SIGKILL)
            _ = try await child.waitForExit()
            let store = try EventStore(path: db)
            let report = try store.verify()
            #expect(report.isClean, "after kill \(round): \(report.problems)")
            // Positions never go back, and only increase in the log
            let head = try store.headPosition()
            #expect(head >= lastHead, "the head went back from \(lastHead) to \(head) after kill \(round)")
            lastHead = head
            let positions = try store.read(limit: .max).map(\.position)
            #expect(positions == positions.sorted() && Set(positions).count == positions.count)
            // Every acknowledged deletion is whole: no event left, ids known, the tombstone as asked
            var ids: [String: [UUID]] = [:]
            for line in child.stdoutLines {
                let parts = line.split(separator: " ").map(String.init)
                if parts.count == 4, parts[0] == "APPENDED" { ids[parts[1]] = parts[2...].compactMap { UUID(uuidString: $0) } }
                guard parts.count == 3, parts[0] == "DELETED" else { continue }
                let info = try #require(try store.streamInfo(parts[1]))
                #expect(info.eventCount == 0 && info.isTombstoned == (parts[2] == "hard"), "\(parts[1]) after kill \(round)")
                for id in ids[parts[1]] ?? [] {
                    #expect(try store.event(withID: id) == nil)
                    let again = try await store.append(to: parts[1], events: [NewEvent(id: id, type: "Noted", data: Data("{}".utf8))])
                    #expect(again.alreadyRecorded && again.deleted, "\(parts[1]) after kill \(round)")
                }
                checked += 1
            }
            for line in child.stdoutLines where line.hasPrefix("TRIMMED ") {
                let stream = String(line.dropFirst("TRIMMED ".count))
                #expect(try store.streamInfo(stream).map { $0.eventCount <= 1 } == true, "\(stream) after kill \(round)")
            }
            // Projections catch up to exactly what a fresh fold gives
            let runner = try await ProjectionRunner(store: store, projections: AppCatalog.logSummaries)
            let caughtUp = try await runner.catchUp()
            for projection in AppCatalog.logSummaries {
                let folded = try await StateHash.of(projection, in: try runner.state(of: projection.name, asOf: caughtUp).reader)
                #expect(try await runner.storedHash(of: projection.name) == folded, "\(projection.name) after kill \(round)")
            }
            await store.close()
        }
        #expect(checked > 10, "only \(checked) deletions were checked")
    }

    @Test("a kill during forgets: the next open finishes every forget begun, and no other subject is lost")
    func killDuringForgets() async throws {
        let directory = try TemporaryDirectory(prefix: "crash-forgets")
        let db = directory.appending("store")
        var random = SystemRandomNumberGenerator()
        var forgotten = 0
        for round in 1...8 {
            let child = try RunningProcess(Self.writer, ["forget", "--db", db, "--round", String(round)])
            try await child.waitForStdoutLines(Int.random(in: 3...30, using: &random))
            try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000, using: &random)))
            child.send(SIGKILL)
            _ = try await child.waitForExit()
            let store = try EventStore(path: db)
            #expect(try store.verify().isClean, "after kill \(round)")
            // Every forget begun (its request recorded) ended with its forgotten event
            let system = try store.readStream("$forgotten")
            let requested = system.filter { $0.type == "$ForgetRequested" }.map { try? JSONValue(parsing: [UInt8]($0.data))["subject"]?.stringValue }
            let done = system.filter { $0.type == "$SubjectForgotten" }.map { try? JSONValue(parsing: [UInt8]($0.data))["subject"]?.stringValue }
            #expect(requested == done, "after kill \(round): requests \(requested), forgotten \(done)")
            let begun = Set(requested.compactMap { $0 ?? nil })
            // Each subject's data reads as forgotten exactly when its forget began; never an error
            for line in child.stdoutLines where line.hasPrefix("SEALED ") {
                let subject = String(line.dropFirst("SEALED ".count))
                let stream = "sealed-" + subject.dropFirst(2)
                let event = try #require(try store.readStream(stream).first, "\(stream) after kill \(round)")
                let text = String(decoding: event.data, as: UTF8.self)
                if begun.contains(subject) {
                    #expect(text.contains(#"{"$forgotten":"\#(subject)"}"#) && !text.contains("secret of"), "\(text) after kill \(round)")
                    forgotten += 1
                } else {
                    #expect(text.contains("secret of \(subject)"), "\(text) after kill \(round)")
                }
            }
            for line in child.stdoutLines where line.hasPrefix("FORGOTTEN ") {
                #expect(begun.contains(String(line.dropFirst("FORGOTTEN ".count))), "\(line) after kill \(round)")
            }
            await store.close()
        }
        #expect(forgotten > 4, "only \(forgotten) forgotten subjects were checked")
    }

    @Test("a kill during a consumer group's work: nothing skipped, nothing reordered, no effect twice, and the next member finishes")
    func killDuringGroupWork() async throws {
        let directory = try TemporaryDirectory(prefix: "crash-groups")
        let db = directory.appending("store")
        var random = SystemRandomNumberGenerator()
        func check(_ store: EventStore, after round: Int) async throws -> Int {
            try await store.openTables(["effects", "violations"])
            let (effects, violations) = try await store.readTables { txn -> ([UInt8], [String]) in
                var effects: [UInt8] = []
                try await txn.scan("effects") { _, value in
                    effects.append(value.first ?? 0)
                    return true
                }
                var violations: [String] = []
                try await txn.scan("violations") { _, value in
                    violations.append(String(decoding: value, as: UTF8.self))
                    return true
                }
                return (effects, violations)
            }
            #expect(effects.allSatisfy { $0 == 1 }, "after round \(round): an effect happened twice")
            #expect(violations.isEmpty, "after round \(round): \(violations)")
            #expect(try store.verify().isClean, "after round \(round)")
            return effects.count
        }
        for round in 1...5 {
            // Given a member killed at a random moment of its work
            let child = try RunningProcess(Self.writer, ["group", "--db", db, "--round", String(round)])
            try await child.waitForStdoutLines(Int.random(in: 1...15, using: &random))
            try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000, using: &random)))
            child.send(SIGKILL)
            _ = try await child.waitForExit()
            // Then each effect happened once, and each stream's events were handled in order
            let store = try EventStore(path: db)
            _ = try await check(store, after: round)
            await store.close()
        }
        // When a last member runs to the end (after the killed one's lease ran out)
        let last = try RunningProcess(Self.writer, ["group", "--db", db, "--round", "last"])
        try await withTimeout(.seconds(120), "the last member to finish the group's work") {
            while !last.stdoutLines.contains("DONE") { try await Task.sleep(for: .milliseconds(20)) }
        }
        last.send(SIGKILL)
        _ = try await last.waitForExit()
        // Then every one of the 2,000 events had its effect exactly once
        let store = try EventStore(path: db)
        defer { store.close() }
        #expect(try await check(store, after: 6) == 2_000)
    }

    @Test("a kill during commands never leaves a snapshot ahead of its stream or apart from its fold")
    func killDuringCommands() async throws {
        let directory = try TemporaryDirectory(prefix: "crash-commands")
        let db = directory.appending("store")
        var random = SystemRandomNumberGenerator()
        var checked = 0
        for round in 0..<10 {
            let child = try RunningProcess(Self.writer, ["commands", "--db", db, "--seed", String(round + 1)])
            try await child.waitForStdoutLines(Int.random(in: 5...40, using: &random))
            try await Task.sleep(for: .microseconds(Int.random(in: 0...20_000, using: &random)))
            child.send(SIGKILL)
            _ = try await child.waitForExit()
            let store = try EventStore(path: db)
            for snapshot in try await Snapshots.list(in: store) {
                #expect(try await AppCatalog.check(snapshot, in: store) == nil, "after kill \(round + 1)")
                checked += 1
            }
            #expect(try store.verify().isClean)
            await store.close()
        }
        #expect(checked > 10, "only \(checked) snapshots were checked")
    }

    @Test("a kill during a rebuild is finished by the next open, to the hash of a fresh fold")
    func killDuringRebuild() async throws {
        let directory = try TemporaryDirectory(prefix: "crash-rebuild")
        let db = directory.appending("store")
        let store = try EventStore(path: db, configuration: StoreConfiguration(durability: .noSync))
        for batch in UInt64(1)...3000 { _ = try await store.append(TortureBatch.appends(seed: Self.seed, batch: batch)) }
        await store.close()
        var random = SystemRandomNumberGenerator()
        for _ in 0..<3 {
            let child = try RunningProcess(Self.writer, ["rebuild", "--db", db])
            try await child.waitForStdoutLines(1)
            try await Task.sleep(for: .microseconds(Int.random(in: 0...30_000, using: &random)))
            child.send(SIGKILL)
            _ = try await child.waitForExit()
            let reopened = try EventStore(path: db)
            try await Self.expectFinishedToAFreshFold(reopened)
            await reopened.close()
        }
    }

    /// Opens a runner of the example projections on `store` (which finishes any rebuild a kill
    /// interrupted), catches it up, and expects every stored hash to be a fresh fold's, nothing
    /// still building, and the store to verify clean.
    static func expectFinishedToAFreshFold(_ store: EventStore) async throws {
        let runner = try await ProjectionRunner(store: store, projections: AppCatalog.logSummaries)
        let head = try await runner.catchUp()
        for projection in AppCatalog.logSummaries {
            let folded = try await StateHash.of(projection, in: try runner.state(of: projection.name, asOf: head).reader)
            #expect(try await runner.storedHash(of: projection.name) == folded)
        }
        #expect(try await runner.statuses().allSatisfy { !$0.isBuilding && $0.rebuild == nil })
        #expect(try store.verify().isClean)
    }

    @Test("a kill during a rebuild with appends going on leaves the old state serving, whole; the next open finishes the rebuild")
    func killDuringRebuildWithAppends() async throws {
        let directory = try TemporaryDirectory(prefix: "crash-shadow-rebuild")
        let db = directory.appending("store")
        let store = try EventStore(path: db, configuration: StoreConfiguration(durability: .noSync))
        for batch in UInt64(1)...3000 { _ = try await store.append(TortureBatch.appends(seed: Self.seed, batch: batch)) }
        let first = try await ProjectionRunner(store: store, projections: AppCatalog.logSummaries)
        try await first.catchUp()
        await store.close()
        var random = SystemRandomNumberGenerator()
        var caughtMidRebuild = 0
        for round in 0..<5 {
            let child = try RunningProcess(
                Self.writer, ["rebuild-appending", "--db", db, "--seed", String(Self.seed), "--start", String(100_000 * (round + 1))])
            try await child.waitForStdoutLines(1)
            try await Task.sleep(for: .microseconds(Int.random(in: 0...40_000, using: &random)))
            child.send(SIGKILL)
            _ = try await child.waitForExit()
            let reopened = try EventStore(path: db)
            // The state that serves is whole: the fold of the log up to its checkpoint, rebuild or not
            let inspecting = try await ProjectionRunner(store: reopened, projections: AppCatalog.logSummaries, inspecting: true)
            for status in try await inspecting.statuses() {
                if status.rebuild != nil { caughtMidRebuild += 1 }
                let projection = try inspecting.projection(named: status.name)
                let folded = try await StateHash.of(projection, in: try inspecting.state(of: status.name, asOf: status.checkpoint).reader)
                #expect(status.hash == folded, "\(status.name) after kill \(round + 1)")
            }
            // And the next open finishes any rebuild, to the hash of a fresh fold
            try await Self.expectFinishedToAFreshFold(reopened)
            await reopened.close()
        }
        #expect(caughtMidRebuild > 0, "no kill landed while a rebuild was under way")
    }

    @Test("a processor killed between handling events and committing its reaction resumes with no reaction twice and none lost")
    func killAProcessor() async throws {
        // Given 600 orders
        let directory = try TemporaryDirectory(prefix: "crash-processor")
        let db = directory.appending("store")
        let store = try EventStore(path: db, configuration: StoreConfiguration(durability: .noSync))
        for n in 1...600 { _ = try await store.append(to: "order-\(n)", events: [NewEvent(type: "Ordered")]) }
        await store.close()
        // When a processor is killed at random moments, in transactions of 1 to 9 events, and run again
        var random = SystemRandomNumberGenerator()
        var kills = 0
        for _ in 0..<40 {
            // Held after 1 to 30 events handled, before that event's transaction commits: the
            // kill lands between handling and committing, whatever the machine's speed.
            let child = try RunningProcess(
                Self.writer,
                ["process", "--db", db, "--batch", String(Int.random(in: 1...9, using: &random)),
                 "--hold-after", String(Int.random(in: 1...30, using: &random))])
            let lines = try await child.waitForStdoutLine(timeout: .seconds(60)) { $0.hasPrefix("HELD") || $0.hasPrefix("CAUGHT-UP") }
            child.send(SIGKILL)
            let status = try await child.waitForExit()
            if status != 0 && lines.contains(where: { $0.hasPrefix("HELD") }) { kills += 1 }
        }
        let last = try await ProcessRunner.run(Self.writer, ["process", "--db", db, "--batch", "7"])
        #expect(last.lines.last == "CAUGHT-UP 600", "\(last)")
        // Then every order has exactly one note, and the tracking position is the last order
        let reopened = try EventStore(path: db)
        defer { reopened.close() }
        let notes = try reopened.read(from: 601, limit: .max)
        #expect(notes.count == 600, "\(notes.count) notes for 600 orders")
        #expect(Set(notes.map(\.stream)).count == 600)
        #expect(notes.allSatisfy { $0.type == "Noted" && $0.version == 1 })
        #expect(try await reopened.trackingPosition(of: "notes") == 600)
        // A run commits fewer than 30 events before its hold, so the first 20 runs cannot reach 600.
        #expect(kills >= 20, "only \(kills) kills landed before the processor finished")
        print("figures: processor: \(kills) kills, 600 orders noted once each")
    }

    @Test("a kill during an import keeps whole batches; importing again completes it exactly")
    func killDuringImport() async throws {
        let directory = try TemporaryDirectory(prefix: "crash-import")
        let db = directory.appending("store")
        let lines = (0..<30_000).map { n in
            #"{"stream":"i-\#(n % 50)","type":"Imported","data":{"n":\#(n)},"id":"\#(TortureBatch.eventID(seed: 99, batch: UInt64(n), index: 0).uuidString)"}"#
        }
        let file = directory.appending("events.ndjson")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let child = try RunningProcess(ProcessRunner.esctl, ["import", file, "--batch-size", "1000", "--db", db])
        // Kill it once some batches are in: wait for the first commit to show in the store.
        try await withTimeout(.seconds(60), "the import's first batch") {
            while true {
                if FileManager.default.fileExists(atPath: db + "/data.mdb"),
                    let size = try? FileManager.default.attributesOfItem(atPath: db + "/data.mdb")[.size] as? NSNumber, size.intValue > 200_000
                { return }
                await Task.yield()
            }
        }
        child.send(SIGKILL)
        _ = try await child.waitForExit()
        let store = try EventStore(path: db)
        let count = try store.statistics().eventCount
        #expect(count % 1000 == 0 || count == 30_000, "the import left \(count) events: not whole batches")
        #expect(try store.verify().isClean)
        await store.close()
        let again = try await ProcessRunner.esctl(["import", file, "--json"], db: db, timeout: .seconds(300))
        #expect(again.status == 0, "\(again)")
        let reopened = try EventStore(path: db)
        defer { reopened.close() }
        #expect(try reopened.statistics().eventCount == 30_000)
        let numbers = try reopened.read(limit: .max).compactMap { try JSONValue(parsing: Array($0.data))["n"]?.intValue }
        #expect(numbers == Array(0..<30_000).map(Int64.init))
    }
}

extension Durability: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}
