import Foundation
import Testing
import TestSupport

@Suite("esctl subscribe")
struct EsctlSubscribeTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-subscribe")
    }

    func subscribe(_ arguments: String...) throws -> RunningProcess {
        try RunningProcess(ProcessRunner.esctl, ["subscribe"] + arguments + ["--db", sandbox.db])
    }

    func append(_ stream: String, _ type: String) async throws {
        let output = try await sandbox.esctl(["append", stream, type])
        #expect(output.status == 0, "\(output)")
    }

    @Test("--from-start --count N prints the events already there and exits 0")
    func catchUpWithCount() async throws {
        for n in 1...3 { try await append("s", "E\(n)") }
        let output = try await sandbox.esctl(["subscribe", "--from-start", "--count", "3", "--json"])
        #expect(output.status == 0, "\(output)")
        #expect(try sandbox.objects(output).map { $0["type"] as? String } == ["E1", "E2", "E3"])
        #expect(output.stderr == "esctl: subscribed from position 1\n")
    }

    @Test("--from takes start, end or a position, as GET /subscribe's from does; anything else, or an empty filter, exits 64")
    func fromWordsAndEmptyFilters() async throws {
        // Given three events
        for n in 1...3 { try await append("s", "E\(n)") }
        // When subscribing --from start, --from 2 and --from end, then each starts where it says
        let fromStart = try await sandbox.esctl(["subscribe", "--from", "start", "--count", "3", "--json"])
        #expect(try sandbox.objects(fromStart).map { $0["position"] as? Int } == [1, 2, 3], "\(fromStart)")
        let fromTwo = try await sandbox.esctl(["subscribe", "--from", "2", "--count", "2", "--json"])
        #expect(try sandbox.objects(fromTwo).map { $0["position"] as? Int } == [2, 3], "\(fromTwo)")
        let fromEnd = try await sandbox.esctl(["subscribe", "--from", "end", "--timeout", "0.2"])
        #expect(fromEnd.status == 75 && fromEnd.stderr.hasPrefix("esctl: subscribed from position 4\n"), "\(fromEnd)")
        // And a word it does not know, or a filter given empty, is refused with one sentence
        let unknown = try await sandbox.esctl(["subscribe", "--from", "begin", "--count", "1"])
        #expect(unknown.status == 64 && unknown.stderr.contains("--from takes a position"), "\(unknown)")
        for flag in ["--category", "--type", "--prefix"] {
            let empty = try await sandbox.esctl(["subscribe", "--from", "start", flag, "", "--count", "1"])
            #expect(empty.status == 64 && empty.stderr.contains("\(flag) is empty"), "\(flag): \(empty)")
            let replay = try await sandbox.esctl(["replay", flag, ""])
            #expect(replay.status == 64 && replay.stderr.contains("\(flag) is empty"), "replay \(flag): \(replay)")
        }
    }

    @Test("from the end it waits for new events from other processes and exits after --count")
    func liveWithCount() async throws {
        try await append("s", "Old")
        let child = try subscribe("--from-end", "--count", "2", "--json")
        try await child.waitForStderr(containing: "subscribed from position 2")
        try await append("s", "New1")
        try await append("t", "New2")
        #expect(try await child.waitForExit() == 0)
        let positions = child.stdoutLines.map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["position"] as? Int
        }
        #expect(positions == [2, 3])
    }

    @Test("each event is flushed as it arrives, and Ctrl-C ends cleanly with 130")
    func flushedPerEventAndInterrupted() async throws {
        #expect(try await sandbox.esctl("init").status == 0)
        let child = try subscribe("--from-end")
        try await child.waitForStderr(containing: "subscribed from position 1")
        try await append("orders-1", "OrderPlaced")
        let lines = try await child.waitForStdoutLines(1)
        #expect(lines.count == 1 && lines[0].hasPrefix("1  orders-1@1  OrderPlaced  "))
        try await append("orders-1", "OrderPaid")
        try await child.waitForStdoutLines(2)
        child.send(SIGINT)
        #expect(try await child.waitForExit() == 130)
        #expect(child.stdoutLines.count == 2)
        #expect(child.stderr == "esctl: subscribed from position 1\n")
    }

    @Test("with --timeout it exits 75 and says how many of the N arrived")
    func timeouts() async throws {
        #expect(try await sandbox.esctl("init").status == 0)
        let none = try await sandbox.esctl(["subscribe", "--count", "1", "--timeout", "0.3"])
        #expect(none.status == 75)
        #expect(none.stderr.contains("Timed out after 0.3 s: 0 of 1 events arrived."))
        try await append("s", "Only")
        // (timeouts with seconds of slack for printing the stored event: the timer starts once
        // the store is open and the subscription made, and a loaded machine may still keep the
        // process from a core after that)
        let some = try await sandbox.esctl(["subscribe", "--from-start", "--count", "2", "--timeout", "4"])
        #expect(some.status == 75)
        #expect(some.lines.count == 1)
        #expect(some.stderr.contains("Timed out after 4 s: 1 of 2 events arrived."))
        let open = try await sandbox.esctl(["subscribe", "--from-start", "--timeout", "3.5"])
        #expect(open.status == 75)
        #expect(open.stderr.contains("1 event arrived."))
    }

    @Test("--stream, --category, --type and --from filter what is printed")
    func filters() async throws {
        for (stream, type) in [("fitness-alice", "GoalSet"), ("chat-main", "Said"), ("fitness-bob", "Started"), ("fitness-alice", "Walked")] {
            try await append(stream, type)
        }
        func positions(_ arguments: String...) async throws -> [Int] {
            let output = try await sandbox.esctl(["subscribe", "--json"] + arguments)
            #expect(output.status == 0, "\(output)")
            return try sandbox.objects(output).compactMap { $0["position"] as? Int }
        }
        #expect(try await positions("--from-start", "--stream", "fitness-alice", "--count", "2") == [1, 4])
        #expect(try await positions("--from-start", "--category", "fitness-", "--count", "3") == [1, 3, 4])
        #expect(try await positions("--from-start", "--type", "Said", "--type", "Started", "--count", "2") == [2, 3])
        #expect(try await positions("--from", "3", "--count", "2") == [3, 4])
    }

    @Test("contradictory or empty options are usage errors")
    func usageErrors() async throws {
        #expect(try await sandbox.esctl(["subscribe", "--from", "1", "--from-start"]).status == 64)
        #expect(try await sandbox.esctl(["subscribe", "--from-end", "--from-start"]).status == 64)
        #expect(try await sandbox.esctl(["subscribe", "--count", "0"]).status == 64)
        #expect(try await sandbox.esctl(["subscribe", "--timeout", "0"]).status == 64)
    }
}
