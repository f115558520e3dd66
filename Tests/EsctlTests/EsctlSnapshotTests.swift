import Commands
import EventStore
import Foundation
import Testing
import TestSupport

/// `esctl snapshots` and the snapshots' place in `verify --deep`.
@Suite("esctl snapshots")
struct EsctlSnapshotTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-snapshots")
    }

    func esctl(_ arguments: String...) async throws -> ProcessOutput {
        try await sandbox.esctl(arguments)
    }

    /// A workout of 102 events: a goal, a start, and 100 walks (the 100th event writes a snapshot).
    func longWorkout() async throws {
        let lines = ([#"{"stream":"fitness-z","type":"GoalSet","data":{"goal":1000000}}"#, #"{"stream":"fitness-z","type":"WorkoutStarted"}"#]
            + (0..<97).map { _ in #"{"stream":"fitness-z","type":"PedometerUpdated","data":{"steps":1,"distance":0}}"# }).joined(separator: "\n")
        #expect(try await sandbox.esctl(["append", "--batch", "-"], stdin: lines).status == 0)
        #expect(try await esctl("fitness", "walk", "--steps", "1", "--user", "z").status == 0)
    }

    @Test("the command that brings a stream to 100 events writes a snapshot; snapshots lists it; --drop removes it")
    func listAndDrop() async throws {
        #expect(try await esctl("snapshots").status == 67)
        #expect(try await esctl("init").status == 0)
        #expect(try await esctl("snapshots").lines == ["no snapshots"])
        try await longWorkout()
        let listed = try sandbox.objects(try await esctl("snapshots", "--json"))
        #expect(listed.count == 1)
        #expect(listed.first?["decider"] as? String == "fitness")
        #expect(listed.first?["deciderVersion"] as? Int == 1)
        let streams = listed.first?["streams"] as? [[String: Any]]
        #expect(streams?.map { $0["stream"] as? String } == ["fitness-z", "alerts-z"])
        #expect(streams?.map { $0["version"] as? Int } == [100, 0])
        #expect((listed.first?["size"] as? Int ?? 0) > 100)
        // The next command folds from it and decides the same.
        let walk = try await esctl("fitness", "walk", "--steps", "1", "--user", "z")
        #expect(walk.lines == ["z: inProgress (button: Pause); goal 1000000, steps 99, distance 0 m, Nessie 0 m"])
        #expect(try await esctl("verify", "--deep").status == 0)
        // Dropping by another stream keeps it; by its stream removes it.
        #expect(try await esctl("snapshots", "--drop", "chat-x").lines == ["dropped 0 snapshots"])
        #expect(try await esctl("snapshots", "--drop", "alerts-z", "--json").stdout == #"{"dropped":1}"# + "\n")
        #expect(try await esctl("snapshots").lines == ["no snapshots"])
        let after = try await esctl("fitness", "walk", "--steps", "1", "--user", "z")
        #expect(after.lines == ["z: inProgress (button: Pause); goal 1000000, steps 100, distance 0 m, Nessie 0 m"])
        #expect(try await esctl("snapshots", "fitness-z").status == 64)
    }

    @Test("verify --deep reports a snapshot that disagrees with its stream")
    func verifyFindsABadSnapshot() async throws {
        try await longWorkout()
        // Given the snapshot's state changed behind the handler's back (the steps doubled)
        let store = try EventStore(path: sandbox.db)
        let entry = try #require(try await Snapshots.list(in: store).first)
        let text = String(decoding: entry.state, as: UTF8.self)
        #expect(text.contains(#""steps":98"#))
        let changed = Array(text.replacingOccurrences(of: #""steps":98"#, with: #""steps":196"#).utf8)
        let key = Array("fitness".utf8) + [0] + Array("fitness-z".utf8) + [0] + Array("alerts-z".utf8) + [0]
        let headerSize = entry.size - entry.state.count
        try await store.writeTables { txn in
            let old = try await txn.get(Snapshots.table, key) ?? []
            try await txn.put(Snapshots.table, key, Array(old.prefix(headerSize)) + changed)
        }
        await store.close()
        // When verify runs deep, then it names the snapshot; without --deep it is not checked
        let deep = try await esctl("verify", "--deep")
        #expect(deep.status == 69)
        #expect(deep.lines.contains("problem: snapshots: the snapshot of 'fitness' for fitness-z@100, alerts-z@0 differs from the fold of its streams through those versions"))
        #expect(try await esctl("verify").status == 0)
    }
}
