import EventStore
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM during the long commands end them cleanly: what is in flight is whole or
/// absent, the command says where it stopped, and exits 130 or 143.
@Suite("Interrupts")
struct InterruptTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory(prefix: "interrupts")
    }

    /// Waits until `esctl stats` shows the head past `position` (a command in another process is
    /// under way).
    func waitForHead(beyond position: Int, db: String) async throws {
        try await withTimeout(.seconds(60), "the head to pass \(position)") {
            while true {
                let stats = try await ProcessRunner.esctl(["stats", "--json"], db: db)
                if let line = stats.lines.first, let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    (object["headPosition"] as? Int ?? 0) > position
                {
                    return
                }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    @Test("an interrupted import says how far it got and how to resume; resuming imports every event exactly once", arguments: [SIGINT, SIGTERM])
    func interruptedImport(signal: Int32) async throws {
        // Given an import of 60,000 events in batches of 500, under way
        let total = 60_000
        let file = directory.appending("events.ndjson")
        let lines = (1...total).map { #"{"stream":"s-\#($0 % 50)","type":"T","id":"\#(SequentialIDs.id(UInt64($0)).uuidString)","data":{"n":\#($0)}}"# }
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let db = directory.appending("store-\(signal)")
        let child = try RunningProcess(ProcessRunner.esctl, ["import", file, "--batch-size", "500", "--durability", "no-sync", "--db", db])
        try await waitForHead(beyond: 0, db: db)
        // When it gets the signal
        child.send(signal)
        let status = try await child.waitForExit(timeout: .seconds(60))
        if status == 0 { return }  // it finished before the signal landed: nothing to check
        // Then it ends with the signal's exit code and says where to resume
        #expect(status == (signal == SIGINT ? 130 : 143), "\(child.stderr)")
        let resume = try #require(child.stderr.firstMatch(of: /Resume with --skip (\d+)\./).flatMap { Int($0.1) }, "\(child.stderr)")
        #expect(child.stderr.hasPrefix("esctl: Interrupted. Imported "), "\(child.stderr)")
        // And the store holds exactly the lines before that point, whole batches
        let head = try await ProcessRunner.esctl(["stats", "--json"], db: db)
        let imported = try #require(try JSONSerialization.jsonObject(with: Data(head.stdout.utf8)) as? [String: Any])["eventCount"] as? Int
        #expect(imported == resume, "\(imported ?? -1) events imported, resume at line \(resume)")
        #expect(resume % 500 == 0)
        // And resuming completes it, each event once
        let resumed = try await ProcessRunner.esctl(["import", file, "--skip", String(resume)], db: db, timeout: .seconds(120))
        #expect(resumed.status == 0, "\(resumed)")
        let store = try EventStore(path: db, mode: .readOnly)
        defer { store.close() }
        #expect(try store.headPosition() == UInt64(total))
        #expect(try store.verify().isClean)
        var seen = Set<UUID>()
        try store.read(limit: .max).forEach { seen.insert($0.id) }
        #expect(seen.count == total)
    }

    @Test("an interrupted rebuild says so; queries answer from the old state; esctl rebuild finishes it to a fresh fold's hash")
    func interruptedRebuild() async throws {
        // Given a store with enough events for a rebuild to take a while
        let db = directory.appending("rebuild")
        let lines = (1...20_000).map { #"{"stream":"chat-room\#($0 % 7)","type":"MessagePosted","data":{"user":"u\#($0 % 13)","text":"message \#($0)","kind":"said"}}"# }
        #expect(try await ProcessRunner.esctl(["import", "-"], db: db, stdin: Data(lines.joined(separator: "\n").utf8), timeout: .seconds(120)).status == 0)
        #expect(try await ProcessRunner.esctl(["query", "messages"], db: db, timeout: .seconds(120)).status == 0)
        let expected = try await sandboxHashes(db)
        // When a rebuild is interrupted once it has started
        let child = try RunningProcess(ProcessRunner.esctl, ["rebuild", "messages", "--db", db])
        try await withTimeout(.seconds(60), "the rebuild to start") {
            while true {
                let statuses = try await ProcessRunner.esctl(["projections", "--json"], db: db)
                if statuses.stdout.contains(#""building":true"#) { return }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        child.send(SIGINT)
        let status = try await child.waitForExit(timeout: .seconds(60))
        if status == 0 { return }  // it finished first
        #expect(status == 130)
        #expect(child.stderr.contains("Interrupted: the rebuild reached position "), "\(child.stderr)")
        // Then listing the projections shows the rebuild under way and does not finish it
        let listed = try await ProcessRunner.esctl(["projections", "--json"], db: db)
        #expect(listed.stdout.contains(#""building":true"#))
        #expect(try await ProcessRunner.esctl(["projections", "--json"], db: db).stdout.contains(#""building":true"#))
        // And a query answers at once from the old state, saying what is left to do
        let queried = try await ProcessRunner.esctl(["query", "messages"], db: db, timeout: .seconds(120))
        #expect(queried.status == 0)
        #expect(queried.stderr.contains("has an interrupted rebuild"), "\(queried.stderr)")
        #expect(try await sandboxHashes(db) == expected)
        // And verify --deep finds no damage and says once what is left to do
        let verified = try await ProcessRunner.esctl(["verify", "--deep"], db: db, timeout: .seconds(120))
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.stderr.components(separatedBy: "has an interrupted rebuild").count == 2, "\(verified.stderr)")
        // And `esctl rebuild` finishes it from where it stopped, to the same hashes
        let finished = try await ProcessRunner.esctl(["rebuild", "messages", "--json"], db: db, timeout: .seconds(120))
        #expect(finished.status == 0, "\(finished)")
        #expect(!(try await ProcessRunner.esctl(["projections", "--json"], db: db).stdout.contains(#""building":true"#)))
        #expect(try await sandboxHashes(db) == expected)
    }

    /// Each projection's stored hash, read in this process.
    func sandboxHashes(_ db: String) async throws -> [String] {
        let output = try await ProcessRunner.run(ProcessRunner.esctl, ["projections", "--json", "--db", db]).stdout
        return output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["hash"] as? String
        }
    }
}
