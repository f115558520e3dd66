@testable import Projections
import Apps
import EventStore
import EventStoreTesting
import Foundation
import ProjectionsTestSupport
import Testing
import TestSupport

@Suite("The projection runner, on every backend")
struct ProjectionConformanceTests {
    @Test("a query through the runner reflects every append that returned before it", arguments: Backend.allCases)
    func readYourWrites(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a runner over an empty store
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType()])
            #expect(try await runner.query("count-by-type") == ["types": [:], "total": 0])
            // When events are appended, then each query counts every one appended before it
            _ = try await f.log.append(to: "s", events: [event("A"), event("B"), event("A")])
            #expect(try await runner.query("count-by-type") == ["types": ["A": 2, "B": 1], "total": 3])
            _ = try await f.log.append(to: "t", events: [event("C")])
            #expect(try await runner.query("count-by-type") == ["types": ["A": 2, "B": 1, "C": 1], "total": 4])
            let status = try #require(try await runner.statuses().first)
            #expect(status.checkpoint == 4 && status.lag == 0 && !status.isBuilding && status.failure == nil)
        }
    }

    @Test(
        "an apply that reads rows while it folds, swallowing their errors, folds the same on every backend (rows not at hand are loaded and the event applied again)",
        arguments: Backend.allCases)
    func foldsReadingRows(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a projection under the skip policy whose apply reads each stream's row with
            // `try?` (an error it swallows would read as no row), caught up in batches of 7
            let runner = try await ProjectionRunner(store: f.log, projections: [SwallowingCounter()], batchSize: 7)
            for n in 0..<30 { _ = try await f.log.append(to: "s-\(n % 3)", events: [event("Counted")]) }
            try await runner.catchUp()
            // Then each stream's count is its number of events, nothing was passed over, and a
            // rebuild gives the same state
            let counts = try await runner.read("swallowing-counter") { state in try await state.rows("counts", as: Int.self).map(\.value) }
            #expect(counts == [10, 10, 10])
            let status = try #require(try await runner.statuses().first)
            #expect(status.eventsSkipped == 0 && status.checkpoint == 30)
            #expect(try await runner.rebuild()[0].hash == status.hash)
        }
    }

    @Test("statuses show the lag of a projection that has not caught up", arguments: Backend.allCases)
    func statusesShowLag(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given one projection caught up to 2 of 3 events and another never run
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType(), StreamSummary()])
            _ = try await f.log.append(to: "s", events: [event("A"), event("B")])
            try await runner.catchUp(["count-by-type"])
            _ = try await f.log.append(to: "s", events: [event("C")])
            // Then the statuses say so
            let statuses = try await runner.statuses()
            #expect(statuses.map(\.name) == ["count-by-type", "stream-summary"])
            #expect(statuses.map(\.checkpoint) == [2, 0])
            #expect(statuses.map(\.lag) == [1, 3])
            // Building means a rebuild under way; a projection that never ran is not building.
            #expect(statuses.map(\.isBuilding) == [false, false])
        }
    }

    @Test("catching up a name given twice applies each event to it once", arguments: Backend.allCases)
    func catchUpNamedTwice(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a store with three events and a runner that has not caught up
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType()])
            _ = try await f.log.append(to: "s", events: [event("A"), event("B"), event("A")])
            // When the same projection is named twice
            try await runner.catchUp(["count-by-type", "count-by-type"])
            // Then its state counts each event once
            #expect(try await runner.query("count-by-type") == ["types": ["A": 2, "B": 1], "total": 3])
            #expect(try await runner.storedHash(of: "count-by-type") == (try await runner.rebuild(["count-by-type"]))[0].hash)
        }
    }

    @Test("a rebuild gives the live state's hash and rows, and two rebuilds give the same bytes", arguments: Backend.allCases)
    func rebuildMatchesLive(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given three projections caught up now and then while 41 events were appended
            let projections: [any Projection] = [EventCountByType(), StreamSummary(), Ledger()]
            let runner = try await ProjectionRunner(store: f.log, projections: projections, batchSize: 7)
            for n in 0..<40 {
                _ = try await f.log.append(to: "acct-\(n % 5)", events: [event(n % 5 == n ? "Opened" : "Deposited", #"{"amount":\#(n)}"#)])
                if n % 9 == 0 { try await runner.catchUp() }
            }
            _ = try await f.log.append(to: "acct-2", events: [event("Closed")])
            try await runner.catchUp()
            let live = try await projections.asyncMap { try await runner.storedHash(of: $0.name) }
            let liveRows = try await dump(f.log, projections)
            // When they are rebuilt, then the hashes and the rows are the live ones
            let first = try await runner.rebuild()
            #expect(first.map(\.hash) == live)
            #expect(first.map(\.checkpoint) == [41, 41, 41])
            #expect(first.map(\.eventsApplied) == [41, 41, 41])
            #expect(try await dump(f.log, projections) == liveRows)
            let second = try await runner.rebuild(["ledger"])
            #expect(second.map(\.hash) == [live[2]])
            #expect(try await dump(f.log, projections) == liveRows)
            // And a name given twice is rebuilt once, and its events counted once
            let twice = try await runner.rebuild(["ledger", "count-by-type", "ledger"])
            #expect(twice.map(\.projection) == ["ledger", "count-by-type"])
            #expect(twice.map(\.eventsApplied) == [41, 41])
            #expect(twice.map(\.hash) == [live[2], live[0]])
            #expect(try await dump(f.log, projections) == liveRows)
        }
    }

    @Test("a changed version is rebuilt when the runner opens, and it says so", arguments: Backend.allCases)
    func versionBumpRebuilds(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a ledger of version 1 caught up
            _ = try await f.log.append(to: "acct-1", events: [event("Opened"), event("Deposited", #"{"amount":5}"#)])
            let first = try await ProjectionRunner(store: f.log, projections: [Ledger()])
            #expect(first.notices.isEmpty)
            try await first.catchUp()
            // When a runner opens with version 2
            var changed = Ledger()
            changed.version = 2
            let second = try await ProjectionRunner(store: f.log, projections: [changed])
            // Then it says so and rebuilds it, and the next runner has nothing to say
            #expect(second.notices == ["Projection 'ledger' changed from version 1 to 2; rebuilding it."])
            let status = try #require(try await second.statuses().first)
            #expect(status.version == 2 && status.checkpoint == 2 && !status.isBuilding)
            let again = try await ProjectionRunner(store: f.log, projections: [changed])
            #expect(again.notices.isEmpty)
        }
    }

    @Test("a rebuild abandoned halfway (its process gone) is detected and finished at the next open", arguments: Backend.allCases)
    func interruptedRebuildIsFinished(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a store whose ledger was caught up, then half rebuilt when its process went away
            for n in 0..<30 {
                _ = try await f.log.append(to: "acct-\(n % 3)", events: [event(n < 3 ? "Opened" : "Deposited", #"{"amount":\#(n)}"#)])
            }
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger()])
            let expected = try await runner.rebuild()[0].hash
            let owner = try await f.log.ownerID
            try await f.log.writeTables { txn in try await CatchUpBatch.startRebuild(Ledger(), txn, startedAt: 0, owner: owner) }
            let folded = try #require(
                try await f.log.readTables { txn in
                    try await CatchUpBatch.fold(txn, projection: Ledger(), slot: .rebuild, limit: 12, maximumRows: 4096, timed: false)
                })
            #expect(try await f.log.writeTables { txn in try await CatchUpBatch.commit(txn, folded, projection: Ledger(), finalStep: 0) } == CommitOutcome.committed)
            // (meanwhile the old state serves, whole)
            let during = try #require(try await runner.statuses().first)
            #expect(during.checkpoint == 30 && during.hash == expected && during.isBuilding && during.rebuild?.position == 12)
            #expect(try await runner.query("ledger") == (try Ledger().query(try await runner.state(of: "ledger", asOf: 30).reader, QueryParameters())))
            try await f.reopen()
            // When a runner opens the store
            let reopened = try await ProjectionRunner(store: f.log, projections: [Ledger()])
            // Then it says so, and finishes the rebuild to the same state as a whole one
            #expect(reopened.notices == ["Projection 'ledger' was being rebuilt when the store last closed (at position 12); finishing the rebuild."])
            let status = try #require(try await reopened.statuses().first)
            #expect(status.checkpoint == 30 && !status.isBuilding && status.hash == expected && status.rebuild == nil)
        }
    }

    @Test("history: the state as of 0, as of the head and in between, without touching the stored tables", arguments: Backend.allCases)
    func asOf(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given four events and a runner that has not caught up
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType()])
            _ = try await f.log.append(to: "s", events: [event("A"), event("B"), event("A"), event("C")])
            let storedBefore = try await runner.storedHash(of: "count-by-type")
            // Then the states as of 0, 2 and 4 are those of the events up to there
            #expect(try await runner.query("count-by-type", asOf: 0) == ["types": [:], "total": 0])
            #expect(try await runner.query("count-by-type", asOf: 2) == ["types": ["A": 1, "B": 1], "total": 2])
            #expect(try await runner.query("count-by-type", asOf: 4) == ["types": ["A": 2, "B": 1, "C": 1], "total": 4])
            // And beyond the head the state is not known yet: an error that names the head, not the head's state
            let beyond = await #expect(throws: ProjectionError.self) { try await runner.query("count-by-type", asOf: 99) }
            #expect(beyond?.code == .invalidQuery)
            #expect(beyond?.message == "Position 99 is beyond the head of the log (4); give a position up to 4.")
            // And the stored state was not touched
            #expect(try await runner.storedHash(of: "count-by-type") == storedBefore)
            #expect(try await runner.statuses()[0].checkpoint == 0)
            let atHead = try await runner.state(of: "count-by-type", asOf: 4)
            try await runner.catchUp()
            #expect(try await StateHash.of(tables: ["counts"], in: atHead.reader) == (try runner.storedHash(of: "count-by-type")))
        }
    }

    @Test("a projection that fails halfway through a batch keeps its tables and checkpoint; the others go on", arguments: Backend.allCases)
    func failureLeavesStateAsItWas(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a ledger caught up through position 2
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger(), EventCountByType()])
            _ = try await f.log.append(to: "acct-1", events: [event("Opened"), event("Deposited", #"{"amount":5}"#)])
            try await runner.catchUp()
            let ledgerBefore = try await runner.storedHash(of: "ledger")
            // When a batch holds good events, then one the ledger cannot apply, then more good ones
            _ = try await f.log.append(to: "acct-1", events: [event("Deposited", #"{"amount":1}"#)])
            _ = try await f.log.append(to: "acct-9", events: [event("Deposited", #"{"amount":1}"#)])
            _ = try await f.log.append(to: "acct-1", events: [event("Deposited", #"{"amount":1}"#)])
            let error = await #expect(throws: ProjectionError.self) { try await runner.catchUp() }
            // Then the error names the projection, the position and the cause
            #expect(error?.code == .stopped)
            #expect(error?.projection == "ledger" && error?.position == 4)
            #expect(error?.message.contains("no account 'acct-9'") == true)
            // And the ledger is exactly as before the batch, while the other projection went on
            let statuses = try await runner.statuses()
            #expect(statuses.map(\.checkpoint) == [2, 5])
            #expect(try await runner.storedHash(of: "ledger") == ledgerBefore)
            #expect(statuses[0].failure?.contains("position 4") == true)
            // And a query of the stopped projection fails the same way
            await #expect(throws: ProjectionError.self) { try await runner.query("ledger") }
        }
    }

    @Test("with the skip policy the failing event is undone, counted and passed over", arguments: Backend.allCases)
    func skipPolicy(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a ledger that skips what it cannot apply
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger(errorPolicy: .skip)])
            // When a poison event and a deposit to no account come
            _ = try await f.log.append(to: "acct-1", events: [event("Opened"), event("Poison"), event("Deposited", #"{"amount":5}"#)])
            _ = try await f.log.append(to: "acct-9", events: [event("Deposited", #"{"amount":1}"#)])
            // Then the totals row counts applied events only: the two failures changed it, and were undone
            #expect(try await runner.query("ledger") == ["accounts": ["acct-1": 5], "events": 2])
            let report = try await runner.rebuild()
            #expect(report.map(\.eventsApplied) == [2])
            #expect(report.map(\.eventsSkipped) == [2])
        }
    }

    @Test("the skip policy records each passed-over event with its reason; the hash covers them; a rebuild makes the same choices", arguments: Backend.allCases)
    func skipPolicyRecordsWhy(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a skipping ledger and a poison event
            let ledger = Ledger(errorPolicy: .skip)
            let runner = try await ProjectionRunner(store: f.log, projections: [ledger])
            _ = try await f.log.append(to: "acct-1", events: [event("Opened"), event("Poison")])
            let hashBefore = try await runner.storedHash(of: "ledger")
            // When it catches up
            try await runner.catchUp()
            // Then the status lists the event passed over and why
            let status = try #require(try await runner.statuses().first)
            #expect(status.eventsSkipped == 1)
            #expect(status.skippedPositions == [PassedOver.Entry(position: 2, reason: "poisoned")])
            // And the passed-over table is part of the state's hash
            #expect(status.hash != hashBefore)
            let live = try await runner.storedHash(of: "ledger")
            #expect(try await runner.rebuild().map(\.hash) == [live])
            #expect(try await StateHash.of(ledger, in: try runner.state(of: "ledger", asOf: 2).reader) == live)
        }
    }

    @Test("an operator's decision passes over the event a stopped projection cannot apply; a rebuild makes the same choice", arguments: Backend.allCases)
    func passOverDecision(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a ledger stopped at position 2 (a deposit to an unknown account)
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger(), EventCountByType()])
            _ = try await f.log.append(to: "acct-1", events: [event("Opened")])
            _ = try await f.log.append(to: "acct-9", events: [event("Deposited", #"{"amount":1}"#)])
            _ = try await f.log.append(to: "acct-1", events: [event("Deposited", #"{"amount":5}"#)])
            await #expect(throws: ProjectionError.self) { try await runner.catchUp() }
            #expect(try await runner.statuses()[0].checkpoint == 0)
            // When an operator passes it over
            let decision = try await runner.passOver("ledger", position: 2, reason: "a test deposit to no account")
            // Then the decision is an event of the store's own stream, naming the projection and the event's id
            #expect(decision.stream == PassedOver.decisionsStream && decision.type == PassedOver.decisionType && decision.position == 4)
            #expect(try await f.log.event(at: 4) == decision)
            let recorded = try PassedOver.Decision(recorded: decision)
            #expect(recorded == PassedOver.Decision(projection: "ledger", eventId: SequentialIDs.id(2), position: 2, reason: "a test deposit to no account"))
            // And the ledger resumes past it, listing it
            #expect(try await runner.query("ledger") == ["accounts": ["acct-1": 5], "events": 2])
            let status = try await runner.statuses()[0]
            #expect(status.checkpoint == 4 && status.failure == nil)
            #expect(status.skippedPositions == [PassedOver.Entry(position: 2, reason: "passed over by decision: a test deposit to no account")])
            // And a rebuild, and the state as of the head, make the same choice
            let live = try await runner.storedHash(of: "ledger")
            #expect(try await runner.rebuild(["ledger"]).map(\.hash) == [live])
            #expect(try await StateHash.of(Ledger(), in: try runner.state(of: "ledger", asOf: 4).reader) == live)
        }
    }

    @Test("a decision is refused for an event already applied, for a projection that skips by itself, and for no event", arguments: Backend.allCases)
    func passOverRefusals(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a ledger caught up to 2
            let runner = try await ProjectionRunner(store: f.log, projections: [Ledger(), EventCountByType()])
            _ = try await f.log.append(to: "acct-1", events: [event("Opened"), event("Deposited", #"{"amount":5}"#)])
            try await runner.catchUp()
            // Then an applied event, no event, a skipping projection and an unknown one are refused
            let applied = await #expect(throws: ProjectionError.self) { try await runner.passOver("ledger", position: 1, reason: "x") }
            #expect(applied?.code == .invalidQuery)
            #expect(applied?.message == "The projection 'ledger' has applied position 1 already (its checkpoint is 2); only an event it has not reached can be passed over.")
            let none = await #expect(throws: ProjectionError.self) { try await runner.passOver("ledger", position: 9, reason: "x") }
            #expect(none?.message == "There is no event at position 9 (the head is 2).")
            let skipper = try await ProjectionRunner(store: f.log, projections: [Ledger(errorPolicy: .skip)])
            let skips = await #expect(throws: ProjectionError.self) { try await skipper.passOver("ledger", position: 2, reason: "x") }
            #expect(skips?.message.contains("its error policy is skip") == true)
            await #expect(throws: ProjectionError.self) { try await runner.passOver("nope", position: 1, reason: "x") }
            // And nothing was recorded
            #expect(try await f.log.headPosition() == 2)
        }
    }

    @Test("unknown names are refused, listing the known ones; bad definitions are refused at open", arguments: Backend.allCases)
    func unknownAndInvalid(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType(), StreamSummary()])
            let unknown = await #expect(throws: ProjectionError.self) { try await runner.query("nope") }
            #expect(unknown?.code == .unknownProjection)
            #expect(unknown?.message.contains("count-by-type, stream-summary") == true)
            let parameter = await #expect(throws: ProjectionError.self) { try await runner.query("count-by-type", parameters: ["user": "x"]) }
            #expect(parameter?.code == .invalidQuery)
            var badName = Ledger()
            badName.name = "bad name"
            let invalid = await #expect(throws: ProjectionError.self) { try await ProjectionRunner(store: f.log, projections: [badName]) }
            #expect(invalid?.code == .invalidDefinition)
            await #expect(throws: ProjectionError.self) { try await ProjectionRunner(store: f.log, projections: [Ledger(), Ledger()]) }
        }
    }

    @Test("runLive keeps projections caught up as commits arrive", arguments: Backend.allCases)
    func live(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType()])
            try await withDaemon(runner) {
                // When two events are appended with the daemon going
                _ = try await f.log.append(to: "s", events: [event("A"), event("B")])
                // Then it applies them by itself
                try await withTimeout(.seconds(10), "the live runner to reach position 2") {
                    while try await runner.statuses()[0].checkpoint < 2 { try await Task.sleep(for: .milliseconds(2)) }
                }
                #expect(try await runner.statuses()[0].hash == (try runner.state(of: "count-by-type", asOf: 2)).hashFor(EventCountByType()))
            }
        }
    }

    @Test("the daemon follows appends of another process (esctl)", arguments: Backend.allCases)
    func daemonFollowsAnotherProcess(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType()])
            try await withDaemon(runner) {
                // When another process appends
                let child = try await ProcessRunner.esctl(["append", "elsewhere", "Happened"], db: f.db)
                #expect(child.status == 0, "\(child)")
                // Then the daemon applies it
                try await withTimeout(.seconds(30), "the daemon to apply the other process's append (position 1)") {
                    while try await runner.statuses()[0].checkpoint < 1 { try await Task.sleep(for: .milliseconds(5)) }
                }
                #expect(try await runner.storedHash(of: "count-by-type") == (try runner.state(of: "count-by-type", asOf: 1)).hashFor(EventCountByType()))
            }
        }
    }
}

/// ProjectionRunner.verify(into:deep:), the projections' part of `esctl verify`.
@Suite("The projection runner's verify, on every backend")
struct RunnerVerifyConformanceTests {
    /// Runs `body` with a store of 5 events and both log summaries caught up.
    func withCaughtUp(_ backend: Backend, _ body: (LogFixture, ProjectionRunner) async throws -> Void) async throws {
        try await withLog(backend) { f in
            let runner = try await ProjectionRunner(store: f.log, projections: [EventCountByType(), StreamSummary()])
            _ = try await f.log.append(to: "s", events: [event("A"), event("B"), event("A")])
            _ = try await f.log.append(to: "t", events: [event("C"), event("A")])
            try await runner.catchUp()
            try await body(f, runner)
        }
    }

    func problems(_ runner: ProjectionRunner, deep: Bool) async throws -> [String] {
        var report = VerificationReport()
        try await runner.verify(into: &report, deep: deep)
        return report.problems.map(\.description)
    }

    @Test("caught-up projections verify clean, deep or not", arguments: Backend.allCases)
    func clean(_ backend: Backend) async throws {
        try await withCaughtUp(backend) { _, runner in
            let (shallow, deep) = (try await problems(runner, deep: false), try await problems(runner, deep: true))
            #expect(shallow == [] && deep == [])
        }
    }

    @Test("a row changed behind the runner's back is found by a deep verify only", arguments: Backend.allCases)
    func tamperedRow(_ backend: Backend) async throws {
        try await withCaughtUp(backend) { f, runner in
            // Given caught-up projections, when a row of count-by-type is overwritten
            let hashBefore = try await runner.storedHash(of: "count-by-type")
            let table = StoredState.tableName("count-by-type", "counts", generation: 0)
            try await f.log.writeTables { txn in try await txn.put(table, RowKey("A").bytes, Int(99).encoded) }
            let hashAfter = try await runner.storedHash(of: "count-by-type")
            // Then the shallow check does not look at rows, and the deep one names the projection
            #expect(hashAfter != hashBefore)
            #expect(try await problems(runner, deep: false) == [])
            #expect(try await problems(runner, deep: true) == [
                "projections: 'count-by-type' at position 5 has hash \(hashAfter), a rebuild gives \(hashBefore)"
            ])
        }
    }

    @Test("a checkpoint past the head is a problem", arguments: Backend.allCases)
    func checkpointPastHead(_ backend: Backend) async throws {
        try await withCaughtUp(backend) { f, runner in
            let past = Checkpoint(version: Int64(EventCountByType().version), position: 9, isBuilding: false)
            try await f.log.writeTables { txn in try await txn.put(Checkpoint.table, Checkpoint.key("count-by-type"), past.encoded) }
            #expect(try await problems(runner, deep: true) == ["projections: 'count-by-type' is at position 9, past the head 5"])
        }
    }

    @Test("state built by another version of a projection is left for the next open to rebuild", arguments: Backend.allCases)
    func otherVersion(_ backend: Backend) async throws {
        try await withCaughtUp(backend) { f, runner in
            let old = Checkpoint(version: Int64(EventCountByType().version) + 1, position: 5, isBuilding: false)
            let table = StoredState.tableName("count-by-type", "counts", generation: 0)
            try await f.log.writeTables { txn in
                try await txn.put(Checkpoint.table, Checkpoint.key("count-by-type"), old.encoded)
                try await txn.put(table, RowKey("A").bytes, Int(99).encoded)
            }
            #expect(try await problems(runner, deep: true) == [])
        }
    }
}

/// Counts each stream's events, reading the stream's row with `try?`: an apply that swallows the
/// errors of its reads (on PostgreSQL the first read of a row is refused until it is loaded).
struct SwallowingCounter: Projection {
    let name = "swallowing-counter"
    let version = 1
    let tables = ["counts"]
    let eventTypes: Set<String>? = ["Counted"]
    let errorPolicy = ProjectionErrorPolicy.skip
    let queryParameters: [QueryParameter] = []

    func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        let key = RowKey(event.stream)
        let count = (try? state.get("counts", key, as: Int.self)) ?? 0
        try state.put("counts", key, count + 1)
    }

    func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        .int(Int64(try await state.rows("counts", as: Int.self).reduce(0) { $0 + $1.value }))
    }
}
