@testable import Projections
import EventStore
import EventStoreTesting
import Foundation
import ProjectionsTestSupport
import Synchronization
import Testing

@Suite("Rebuilds folded in scratch tables (LMDB)")
struct ScratchRebuildTests {
    /// The scratch directory of `projection`'s rebuild in the store at `path`.
    static func scratchPath(_ path: String, _ projection: String) -> String {
        path + "/rebuild-scratch-" + projection.utf8.map { String(format: "%02x", $0) }.joined()
    }

    @Test("a rebuild beside the serving state folds in scratch tables, copies its state in, and leaves neither scratch nor progress behind")
    func foldsApart() async throws {
        try await withLog(.lmdb) { f in
            // Given a ledger of 200 events over 9 accounts, caught up
            for n in 0..<200 {
                _ = try await f.log.append(to: "acct-\(n % 9)", events: [event(n < 9 ? "Opened" : "Deposited", #"{"amount":\#(n)}"#)])
            }
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger()], batchSize: 10)
            try await runner.catchUp()
            let before = try await runner.storedHash(of: "ledger")
            let path = f.log.location
            // When it is rebuilt, looking for its scratch after each batch folded
            let seen = Atomic<Int>(0)
            let reports = try await runner.rebuild(progress: { _, _, _ in
                if FileManager.default.fileExists(atPath: Self.scratchPath(path, "ledger")) { seen.add(1, ordering: .relaxed) }
            })
            // Then the state is a fresh fold's, in generation 1, with no scratch and no progress left
            #expect(reports.map(\.hash) == [before] && reports.map(\.checkpoint) == [200])
            #expect(seen.load(ordering: .relaxed) > 0, "the scratch directory never existed while the rebuild folded")
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix("rebuild-scratch") } == [])
            let (generation, folded, rebuilding) = try await f.log.readTables { txn in
                (
                    try await CatchUpBatch.readCheckpoint("ledger", txn)?.generation, try await CatchUpBatch.readFolded("ledger", txn),
                    try await CatchUpBatch.readCheckpoint("ledger", txn, slot: .rebuild)
                )
            }
            #expect(generation == 1 && folded == nil && rebuilding == nil)
            #expect(try await runner.storedHash(of: "ledger") == (try runner.state(of: "ledger", asOf: 200)).hashFor(Ledger()))
        }
    }

    @Test("while a rebuild folds apart, statuses show how far it has come, not the position 0 its tables are at")
    func progressInStatuses() async throws {
        try await withLog(.lmdb) { f in
            // Given 400 events folded by stream-summary (a row per stream), caught up
            for n in 0..<400 { _ = try await f.log.append(to: "s-\(n % 50)", events: [event("T")]) }
            let runner = try await ProjectionRunner(store: f.log, projections: [StreamSummary()], batchSize: 10)
            try await runner.catchUp()
            // When it is rebuilt, holding its fold at the batch after the progress was written
            // (every 4th batch) until the statuses have been read
            let release = DispatchSemaphore(value: 0)
            let held = Atomic<Bool>(false)
            let reached = Atomic<UInt64>(0)
            let rebuild = Task {
                try await runner.rebuild(progress: { _, position, _ in
                    guard position >= 50, !held.exchange(true, ordering: .relaxed) else { return }
                    reached.store(position, ordering: .relaxed)
                    _ = release.wait(timeout: .now() + 60)
                })
            }
            try await withTimeout(.seconds(60), "the rebuild's fold to pass position 50") {
                while reached.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(2)) }
            }
            let status = try #require(try await runner.statuses().first)
            let stored = try await f.log.readTables { txn in try await CatchUpBatch.readCheckpoint("stream-summary", txn, slot: .rebuild)?.position }
            release.signal()
            _ = try await rebuild.value
            // Then the status names the fold's progress (written every 4 batches of 10), while the
            // stored rebuild checkpoint is still at 0
            #expect(stored == 0)
            let position = try #require(status.rebuild?.position)
            #expect(position >= 40 && position <= reached.load(ordering: .relaxed), "status at \(position), fold at \(reached.load(ordering: .relaxed))")
            #expect(status.rebuild?.lag == 400 - position && status.checkpoint == 400 && status.isBuilding)
        }
    }

    @Test("a rebuild that stops while it folds apart keeps what it folded before the stop: the next attempt starts there")
    func stopKeepsTheFold() async throws {
        try await withLog(.lmdb) { f in
            // Given a ledger of 40 events over 5 accounts, then an event it cannot apply
            for n in 0..<40 {
                _ = try await f.log.append(to: "acct-\(n % 5)", events: [event(n < 5 ? "Opened" : "Deposited", #"{"amount":1}"#)])
            }
            _ = try await f.log.append(to: "acct-0", events: [event("Poison")])
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger()], batchSize: 10)
            await #expect(throws: ProjectionError.self) { try await runner.catchUp() }
            // When it is rebuilt (folding apart, 10 positions a batch)
            await #expect(throws: ProjectionError.self) { _ = try await runner.rebuild() }
            // Then the rebuild's record is at the event before the stop, and its generation holds the fold up to there
            let (record, accounts, total) = try await f.log.readTables { txn in
                (
                    try await CatchUpBatch.readCheckpoint("ledger", txn, slot: .rebuild),
                    try await txn.count(StoredState.tableName("ledger", "accounts", generation: 1)),
                    try await txn.get(StoredState.tableName("ledger", "totals", generation: 1), RowKey("all").bytes)
                )
            }
            #expect(record?.position == 40 && record?.generation == 1)
            #expect(accounts == 5)
            #expect(try total.map { try Int(decoding: $0) } == 40)
            #expect(try FileManager.default.contentsOfDirectory(atPath: f.log.location).filter { $0.hasPrefix("rebuild-scratch") } == [])
        }
    }

    @Test("a rebuild whose copy was cut short (rows in its generation, its checkpoint at 0, stale progress) empties its generation and folds again")
    func copyCutShort() async throws {
        try await withLog(.lmdb) { f in
            // Given a ledger caught up to 60 events
            for n in 0..<60 {
                _ = try await f.log.append(to: "acct-\(n % 5)", events: [event(n < 5 ? "Opened" : "Deposited", #"{"amount":\#(n)}"#)])
            }
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger()], batchSize: 10)
            try await runner.catchUp()
            let before = try await runner.storedHash(of: "ledger")
            // and a rebuild that was cut short in its copy: its checkpoint at 0, part of a copy in
            // its generation (a row no fold makes), its progress, and its scratch
            let owner = try await f.log.ownerID
            try await f.log.writeTables { txn in
                try await CatchUpBatch.startRebuild(Ledger(), txn, startedAt: 0, owner: owner)
                try await txn.put(StoredState.tableName("ledger", "accounts", generation: 1), RowKey("acct-stray").bytes, [1, 2, 3])
                let folded = Checkpoint(version: Int64(Ledger().version), position: 50, isBuilding: true, generation: 1)
                try await txn.put(Checkpoint.rebuildTable, Checkpoint.foldedKey("ledger"), folded.encoded)
            }
            let scratch = Self.scratchPath(f.log.location, "ledger")
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            try Data([0]).write(to: URL(fileURLWithPath: scratch + "/data.mdb"))
            // When the store is opened again (the runner finishes the rebuild it finds)
            try await f.reopen()
            let reopened = try await ProjectionRunner(store: f.log, projections: [Ledger()], batchSize: 10)
            // Then the state is a fresh fold's: the stray row is gone, and so are the progress and the scratch
            #expect(try await reopened.storedHash(of: "ledger") == before)
            let (stray, folded, generation) = try await f.log.readTables { txn in
                (
                    try await txn.get(StoredState.tableName("ledger", "accounts", generation: 1), RowKey("acct-stray").bytes),
                    try await CatchUpBatch.readFolded("ledger", txn), try await CatchUpBatch.readCheckpoint("ledger", txn)?.generation
                )
            }
            #expect(stray == nil && folded == nil && generation == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: f.log.location).filter { $0.hasPrefix("rebuild-scratch") } == [])
        }
    }
}
