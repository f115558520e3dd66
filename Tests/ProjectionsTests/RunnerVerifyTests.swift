@testable import Projections
import Apps
import EventStore
import Foundation
import Testing
import TestSupport

/// ProjectionRunner.verify(into:deep:), the projections' part of `esctl verify`.
@Suite("Projection runner: verify")
struct RunnerVerifyTests {
    /// A store with 5 events and both example projections caught up.
    func caughtUp() async throws -> (ProjectionFixture, ProjectionRunner) {
        let f = try ProjectionFixture()
        let runner = try await ProjectionRunner(store: f.store, projections: [EventCountByType(), StreamSummary()])
        _ = try await f.store.append(to: "s", events: [event("A"), event("B"), event("A")])
        _ = try await f.store.append(to: "t", events: [event("C"), event("A")])
        try await runner.catchUp()
        return (f, runner)
    }

    func problems(_ runner: ProjectionRunner, deep: Bool) async throws -> [String] {
        var report = VerificationReport()
        try await runner.verify(into: &report, deep: deep)
        return report.problems.map(\.description)
    }

    @Test("caught-up projections verify clean, deep or not")
    func clean() async throws {
        let (_, runner) = try await caughtUp()
        #expect(try await problems(runner, deep: false) == [])
        #expect(try await problems(runner, deep: true) == [])
    }

    @Test("a row changed behind the runner's back is found by a deep verify only")
    func tamperedRow() async throws {
        // Given caught-up projections, when a row of count-by-type is overwritten
        let (f, runner) = try await caughtUp()
        let hashBefore = try runner.storedHash(of: "count-by-type")
        let table = StoredState.tableName("count-by-type", "counts", generation: 0)
        try await f.store.writeTables { txn in try txn.put(table, RowKey("A").bytes, Int(99).encoded) }
        let hashAfter = try runner.storedHash(of: "count-by-type")

        // Then the shallow check does not look at rows, and the deep one names the projection
        #expect(try await problems(runner, deep: false) == [])
        #expect(try await problems(runner, deep: true) == [
            "projections: 'count-by-type' at position 5 has hash \(hashAfter), a rebuild gives \(hashBefore)"
        ])
    }

    @Test("a checkpoint past the head is a problem")
    func checkpointPastHead() async throws {
        let (f, runner) = try await caughtUp()
        let past = Checkpoint(version: Int64(EventCountByType().version), position: 9, isBuilding: false)
        try await f.store.writeTables { txn in try txn.put(Checkpoint.table, Checkpoint.key("count-by-type"), past.encoded) }
        #expect(try await problems(runner, deep: true) == ["projections: 'count-by-type' is at position 9, past the head 5"])
    }

    @Test("state built by another version of a projection is left for the next open to rebuild")
    func otherVersion() async throws {
        let (f, runner) = try await caughtUp()
        let old = Checkpoint(version: Int64(EventCountByType().version) + 1, position: 5, isBuilding: false)
        let table = StoredState.tableName("count-by-type", "counts", generation: 0)
        try await f.store.writeTables { txn in
            try txn.put(Checkpoint.table, Checkpoint.key("count-by-type"), old.encoded)
            try txn.put(table, RowKey("A").bytes, Int(99).encoded)
        }
        #expect(try await problems(runner, deep: true) == [])
    }
}
