@testable import Projections
import Apps
import EventStore
import EventStoreTesting
import Foundation
import Testing
import TestSupport

/// The live projections heal by themselves: a failed write (a full disk, a cut connection) stops
/// them for a while, never for good.
@Suite("The live projections after failed writes, on every backend")
struct LiveRecoveryConformanceTests {
    /// Waits until the runner's only projection has applied `position`.
    func waitForCheckpoint(_ runner: ProjectionRunner, _ position: UInt64, _ what: String) async throws {
        try await withTimeout(.seconds(30), "\(what) (the checkpoint is at \((try? runner.statuses()[0].checkpoint) ?? 0))") {
            while try await runner.statuses()[0].checkpoint < position { try await Task.sleep(for: .milliseconds(5)) }
        }
    }

    @Test(
        "after table writes fail, the daemon retries with a growing back-off on its clock, says when it stops and when it resumes, and catches up by itself",
        arguments: Backend.allCases)
    func healsAfterFailedWrites(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let store = FailingWritesLog(f.log)
            let clock = TestClock()
            let logs = LogCapture()
            let runner = try await ProjectionRunner(store: store, projections: [EventCountByType()], logger: logs.logger, clock: clock)
            try await withDaemon(runner) {
                // Given live projections, caught up
                _ = try await f.log.append(to: "s", events: [event("Before")])
                try await waitForCheckpoint(runner, 1, "the daemon to apply the first event")
                // When the next three table writes fail, and an event is appended
                store.failNextWrites(3)
                _ = try await f.log.append(to: "s", events: [event("After")])
                // Then the daemon waits 50 ms, 200 ms, then 1 s on its clock before each retry,
                // applying nothing meanwhile
                for (tries, delay) in zip(1..., [Duration.milliseconds(50), .milliseconds(200), .seconds(1)]) {
                    try await clock.waitForSleepers(1, timeout: .seconds(60))
                    #expect(store.failedWrites == tries, "the daemon sleeps after its failed write \(tries)")
                    #expect(try await runner.statuses()[0].checkpoint == 1)
                    clock.advance(by: delay)
                }
                // And the retry after the last failure passes: it catches up by itself
                try await waitForCheckpoint(runner, 2, "the daemon to catch up once the writes pass again")
                #expect(try await runner.query("count-by-type") == ["types": ["After": 1, "Before": 1], "total": 2])
                // And it said once that it stopped, and once that it resumed (logged just after
                // the catch-up's checkpoint, so awaited)
                try await waitUntil("the daemon to log that it resumed") {
                    logs.messages(.warning).count >= 2
                }
                let warnings = logs.entries.withLock { $0.filter { $0.level == .warning } }
                #expect(warnings.map(\.message) == ["live projections stopped; retrying until they pass", "live projections resumed"])
                #expect(warnings.first?.metadata[LogKeys.reason].map { "\($0)".contains("injected: the disk is full") } == true, "\(warnings)")
                #expect(warnings.last?.metadata[LogKeys.attempts] == "3", "\(warnings)")
                // And it follows later commits as before, with no clock moved
                _ = try await f.log.append(to: "t", events: [event("Later")])
                try await waitForCheckpoint(runner, 3, "the healed daemon to apply a later event")
                #expect(clock.sleeperCount == 0)
            }
        }
    }

    @Test(
        "a table write whose commit's answer was lost (a failover after COMMIT): the daemon retries, and applies each event once",
        arguments: Backend.allCases)
    func lostAnswerAppliedOnce(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let store = FailingWritesLog(f.log)
            let clock = TestClock()
            let runner = try await ProjectionRunner(store: store, projections: [EventCountByType()], logger: LogCapture().logger, clock: clock)
            try await withDaemon(runner) {
                // Given live projections, caught up
                _ = try await f.log.append(to: "s", events: [event("Before")])
                try await waitForCheckpoint(runner, 1, "the daemon to apply the first event")
                // When the next table write commits but its answer is lost, and an event is appended
                store.loseNextAnswers(1)
                _ = try await f.log.append(to: "s", events: [event("After")])
                // Then the daemon retries after its back-off
                try await clock.waitForSleepers(1, timeout: .seconds(60))
                #expect(store.failedWrites == 1)
                clock.advance(by: .milliseconds(50))
                // And it resumes at the checkpoint the lost commit recorded: each event counted once
                try await waitForCheckpoint(runner, 2, "the daemon to go on after the lost answer")
                _ = try await f.log.append(to: "t", events: [event("Later")])
                try await waitForCheckpoint(runner, 3, "the daemon to apply a later event")
                #expect(try await runner.query("count-by-type") == ["types": ["After": 1, "Before": 1, "Later": 1], "total": 3])
            }
        }
    }
}
