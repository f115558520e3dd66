@testable import Projections
import Apps
import EventStore
import EventStoreTesting
import Foundation
import ProjectionsTestSupport
import Testing

/// A runner on a store opened read-only (a user who may only read the files, a PostgreSQL
/// standby, `esctl serve --read-only`) writes nothing and answers from the states that can.
@Suite("The projection runner on a store opened read-only, on every backend")
struct ReadOnlyRunnerConformanceTests {
    /// Two events, with count-by-type caught up with both and stream-summary with the first only.
    func givenOneProjectionBehind(_ f: LogFixture) async throws {
        let writer = try await ProjectionRunner(store: f.log, projections: [EventCountByType(), StreamSummary()])
        _ = try await f.log.append(to: "s", events: [event("A")])
        try await writer.catchUp(["stream-summary"])
        _ = try await f.log.append(to: "t", events: [event("B")])
        try await writer.catchUp(["count-by-type"])
    }

    @Test("a caught-up state answers; one behind throws notCaughtUp unless a reached minPosition or asOf is asked; nothing is written", arguments: Backend.allCases)
    func answersFromStatesThatCan(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            try await givenOneProjectionBehind(f)
            let projections: [any Projection] = [EventCountByType(), StreamSummary()]
            let rowsBefore = try await dump(f.log, projections)
            // When the store is opened read-only and a runner made on it
            try await f.reopen(mode: .readOnly)
            let reader = try await ProjectionRunner(store: f.log, projections: projections)
            let statusesBefore = try await reader.statuses()
            #expect(reader.isReadOnly && reader.notices.isEmpty)
            #expect(statusesBefore.map(\.checkpoint) == [2, 1] && statusesBefore.map(\.lag) == [0, 1])
            // Then the caught-up state answers, waited for or not
            let counted: JSONValue = ["types": ["A": 1, "B": 1], "total": 2]
            #expect(try await reader.query("count-by-type") == counted)
            #expect(try await reader.query("count-by-type", minPosition: 2, timeout: .seconds(30)) == counted)
            // And the one behind says it cannot catch up here, at the head it is behind
            for attempt in [{ try await reader.query("stream-summary") }, { try await reader.read("stream-summary") { _ in JSONValue.null } }] {
                await #expect {
                    _ = try await attempt()
                } throws: { error in
                    let error = error as? ProjectionError
                    return error?.code == .notCaughtUp && error?.position == 2 && error?.projection == "stream-summary"
                        && error?.message.hasPrefix("The projection 'stream-summary' has applied the log up to position 1 of 2, and the store is open read-only") == true
                }
            }
            await #expect { try await reader.catchUp() } throws: { ($0 as? ProjectionError)?.code == .notCaughtUp }
            // But answers a client that asks for a position it has reached, or for the past
            let summary = try await reader.query("stream-summary", minPosition: 1, timeout: .seconds(30))
            #expect(summary["streams"]?.arrayValue?.count == 1, "\(summary)")
            #expect(try await reader.query("stream-summary", asOf: 2)["streams"]?.arrayValue?.count == 2)
            // And a wait for a position no one catches it up to runs out as anywhere
            await #expect {
                try await reader.query("stream-summary", minPosition: 2, timeout: .milliseconds(300))
            } throws: { ($0 as? ProjectionError)?.code == .timedOut }
            // And the daemon, with nothing it may write, ends at once
            let live = reader.runLive()
            try await withTimeout(.seconds(30), "the read-only runner's daemon to end by itself") { await live.value }
            // And nothing was written
            #expect(try await dump(f.log, projections) == rowsBefore)
            #expect(try await reader.statuses() == statusesBefore)
            #expect(try await f.log.headPosition() == 2)
            // When another handle, which may write, catches the projection up while a client
            // waits (PostgreSQL: LMDB allows one handle per process; ServeReadOnlyTests does it
            // with two processes)
            guard backend == .postgres else { return }
            let writerLog = try await f.openAnother()
            return try await writerLog.closingAfter {
                let waiting = Task { try await reader.query("stream-summary", minPosition: 2, timeout: .seconds(60)) }
                try await ProjectionRunner(store: writerLog, projections: projections).catchUp(["stream-summary"])
                // Then the wait answers with the state it built
                let caughtUp = try await withTimeout(.seconds(60), "the read-only wait to see the checkpoint another handle moved") {
                    try await waiting.value
                }
                #expect(caughtUp["streams"]?.arrayValue?.count == 2, "\(caughtUp)")
                #expect(try await reader.query("stream-summary") == caughtUp)
            }
        }
    }

    @Test("a state that holds events deleted since (and no rebuild under way) is not served", arguments: Backend.allCases)
    func deletedEventsAreNotServed(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a ledger caught up, then a stream whose events it folded deleted
            _ = try await f.log.append(to: "acct-1", events: [event("Opened"), event("Deposited", #"{"amount":5}"#)])
            _ = try await f.log.append(to: "acct-2", events: [event("Opened")])
            try await ProjectionRunner(store: f.log, projections: [Ledger()]).catchUp()
            _ = try await f.log.deleteStream("acct-1", expectedVersion: .any, hard: false)
            // When the store is opened read-only
            try await f.reopen(mode: .readOnly)
            let reader = try await ProjectionRunner(store: f.log, projections: [Ledger()])
            // Then it says it does not rebuild it, and answers no query from the state with the deleted events
            #expect(reader.notices == ["Projection 'ledger' read events that were deleted since; the store is open read-only, so it is not rebuilt here."])
            await #expect {
                _ = try await reader.query("ledger")
            } throws: { error in
                (error as? ProjectionError)?.message
                    == "The projection 'ledger' holds events deleted since it was built, and the store is open read-only, so it cannot be rebuilt without them here: catch it up where the store can be written (`esctl query ledger` or `esctl serve` there rebuilds it)."
            }
        }
    }

    @Test("a state built by another version is not rebuilt: the notice says so, and its queries throw notCaughtUp naming the change", arguments: Backend.allCases)
    func otherVersionIsNotRebuilt(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a ledger of version 1 caught up
            _ = try await f.log.append(to: "acct-1", events: [event("Opened"), event("Deposited", #"{"amount":5}"#)])
            try await ProjectionRunner(store: f.log, projections: [Ledger()]).catchUp()
            // When the store is opened read-only with a ledger of version 2
            try await f.reopen(mode: .readOnly)
            var changed = Ledger()
            changed.version = 2
            let reader = try await ProjectionRunner(store: f.log, projections: [changed])
            // Then it says it does not rebuild it, and answers no query from the old state
            #expect(reader.notices == ["Projection 'ledger' changed from version 1 to 2; the store is open read-only, so it is not rebuilt here."])
            await #expect {
                _ = try await reader.query("ledger")
            } throws: { error in
                (error as? ProjectionError)?.message
                    == "The projection 'ledger' changed from version 1 to 2, and the store is open read-only, so it cannot be rebuilt here: rebuild it where the store can be written (`esctl rebuild ledger`)."
            }
            let status = try #require(try await reader.statuses().first)
            #expect(status.checkpoint == 2 && status.version == 2)
        }
    }
}
