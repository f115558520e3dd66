@testable import Projections
import EventStore
import EventStoreTesting
import Foundation
import ProjectionsTestSupport
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A shadow rebuild keeps its owner's id (``EventLog/ownerID``): a runner leaves alone a rebuild
/// whose owner still has the store open, and finishes one whose owner is gone. On LMDB the owner
/// is another process of this host; on PostgreSQL another handle, which could be on any host.
@Suite("Rebuild owners, on every backend")
struct RebuildOwnerConformanceTests {
    /// Another owner of the store: its id, and how to make it go away (dead for `isOwnerAlive`).
    private struct OtherOwner {
        let id: Int64
        let end: @Sendable () async throws -> Void
    }

    private func otherOwner(_ backend: Backend, _ f: LogFixture) async throws -> OtherOwner {
        switch backend {
        case .lmdb:
            let process = try RunningProcess(URL(fileURLWithPath: "/bin/sleep"), ["60"])
            return OtherOwner(id: Int64(process.processIdentifier)) {
                process.send(SIGKILL)
                _ = try await process.waitForExit()
            }
        case .postgres:
            let handle = try await f.openAnother()
            let log = f.log
            let id = try await handle.ownerID
            return OtherOwner(id: id) {
                await handle.close()
                // The owner lock goes with the session, closed before close() returned; the
                // server ends its backend a moment later.
                try await withTimeout(.seconds(30), "the closed handle's owner lock to be released") {
                    while try await log.isOwnerAlive(id) { try await Task.sleep(for: .milliseconds(20)) }
                }
            }
        }
    }

    @Test("an owner id is alive while its handle is open, and a number no handle holds is not", arguments: Backend.allCases)
    func ownerIDs(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given the store and another owner
            let other = try await otherOwner(backend, f)
            // Then both are alive, distinct and positive; numbers no owner holds are not
            let mine = try await f.log.ownerID
            #expect(mine > 0 && other.id > 0 && other.id != mine)
            #expect(try await f.log.isOwnerAlive(mine))
            #expect(try await f.log.isOwnerAlive(other.id))
            #expect(try await !f.log.isOwnerAlive(0))
            #expect(try await !f.log.isOwnerAlive(-5))
            #expect(try await !f.log.isOwnerAlive(Int64(Int32.max) + 1))
            // When the other goes away, then it is not alive any more
            try await other.end()
            #expect(try await !f.log.isOwnerAlive(other.id))
        }
    }

    @Test("a rebuild another living owner runs is not taken over; once that owner is gone, the next runner finishes it", arguments: Backend.allCases)
    func rebuildOfAnotherOwner(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a ledger whose rebuild was started by another owner still holding the store
            for n in 0..<40 {
                _ = try await f.log.append(to: "acct-\(n % 4)", events: [event(n < 4 ? "Opened" : "Deposited", #"{"amount":\#(n)}"#)])
            }
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger()])
            try await runner.catchUp()
            let hash = try await runner.storedHash(of: "ledger")
            let other = try await otherOwner(backend, f)
            let owner = other.id
            try await f.log.writeTables { txn in
                try await CatchUpBatch.startRebuild(Ledger(), txn, startedAt: 0, owner: owner)
            }
            // When runners open meanwhile
            let meanwhile = try await ProjectionRunner(store: f.log, projections: [Ledger()])
            let oneShot = try await ProjectionRunner(store: f.log, projections: [Ledger()], finishingRebuilds: false)
            // Then neither takes it over: no notice, the rebuild stays where it was, the old state answers
            #expect(meanwhile.notices.isEmpty && oneShot.notices.isEmpty)
            #expect(try await meanwhile.statuses()[0].rebuild?.position == 0)
            #expect(try await meanwhile.storedHash(of: "ledger") == hash)
            // When that owner is gone
            try await other.end()
            // Then a one-shot runner says so and leaves it, and a runner that finishes rebuilds finishes it
            let later = try await ProjectionRunner(store: f.log, projections: [Ledger()], finishingRebuilds: false)
            #expect(later.notices == ["Projection 'ledger' has an interrupted rebuild (at position 0); the old state answers until `esctl rebuild ledger` finishes it."])
            #expect(try await later.statuses()[0].rebuild != nil)
            let finishing = try await ProjectionRunner(store: f.log, projections: [Ledger()])
            #expect(finishing.notices == ["Projection 'ledger' was being rebuilt when the store last closed (at position 0); finishing the rebuild."])
            let status = try #require(try await finishing.statuses().first)
            #expect(status.rebuild == nil && status.checkpoint == 40 && status.hash == hash)
        }
    }
}
