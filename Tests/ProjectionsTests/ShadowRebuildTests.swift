@testable import Projections
import Apps
import EventStore
import Foundation
import ProjectionsTestSupport
import Testing
import TestSupport

/// The LMDB-only part of rebuilds beside the serving state: a rebuild's owner is a process id,
/// which says whether the process running it is alive on this host. (The rest, on every
/// backend: ConformanceTests/RebuildConformanceTests.swift.)
@Suite("Rebuilds beside the serving state: owners by process id")
struct ShadowRebuildTests {
    @Test("a rebuild another living process runs is not taken over; once that process is gone, the next runner finishes it")
    func rebuildOfAnotherProcess() async throws {
        // Given a ledger whose rebuild was started, folded to 10, by another process still running
        let f = try ProjectionFixture()
        for n in 0..<40 {
            _ = try await f.store.append(to: "acct-\(n % 4)", events: [event(n < 4 ? "Opened" : "Deposited", #"{"amount":\#(n)}"#)])
        }
        let runner = try await ProjectionRunner(store: f.store, projections: [Ledger()])
        try await runner.catchUp()
        let hash = try runner.storedHash(of: "ledger")
        let other = try RunningProcess(URL(fileURLWithPath: "/bin/sleep"), ["60"])
        defer { other.send(SIGKILL) }
        let owner = Int64(other.processIdentifier)
        try await f.store.writeTables { txn in
            try CatchUpBatch.startRebuild(Ledger(), txn, startedAt: 0)
            var record = try #require(try CatchUpBatch.readCheckpoint("ledger", txn, slot: .rebuild))
            record.owner = owner
            try txn.put(Checkpoint.rebuildTable, Checkpoint.key("ledger"), record.encoded)
        }
        // When runners open meanwhile
        let meanwhile = try await ProjectionRunner(store: f.store, projections: [Ledger()])
        let oneShot = try await ProjectionRunner(store: f.store, projections: [Ledger()], finishingRebuilds: false)
        // Then neither takes it over: no notice, the rebuild stays where it was, the old state answers
        #expect(meanwhile.notices.isEmpty && oneShot.notices.isEmpty)
        #expect(try meanwhile.statuses()[0].rebuild?.position == 0)
        #expect(try meanwhile.storedHash(of: "ledger") == hash)
        // When that process is gone
        other.send(SIGKILL)
        _ = try await other.waitForExit()
        // Then a one-shot runner says so and leaves it, and a runner that finishes rebuilds finishes it
        let later = try await ProjectionRunner(store: f.store, projections: [Ledger()], finishingRebuilds: false)
        #expect(later.notices == ["Projection 'ledger' has an interrupted rebuild (at position 0); the old state answers until `esctl rebuild ledger` finishes it."])
        #expect(try later.statuses()[0].rebuild != nil)
        let finishing = try await ProjectionRunner(store: f.store, projections: [Ledger()])
        #expect(finishing.notices == ["Projection 'ledger' was being rebuilt when the store last closed (at position 0); finishing the rebuild."])
        let status = try #require(try finishing.statuses().first)
        #expect(status.rebuild == nil && status.checkpoint == 40 && status.hash == hash)
    }
}
