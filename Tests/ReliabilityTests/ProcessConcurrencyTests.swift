import EventStore
import Foundation
import Projections
import Testing
import TestSupport

/// Four processes append to one stream with expected versions (and to their own streams) at
/// once: no update is lost, every conflict goes to exactly the loser, the log verifies clean.
@Suite("Concurrency across processes")
struct ProcessConcurrencyTests {
    @Test("four processes contending for one stream")
    func fourProcesses() async throws {
        let directory = try TemporaryDirectory(prefix: "contend")
        let db = directory.appending("store")
        let count = 40
        let processes = try (0..<4).map { process in
            try RunningProcess(
                ProcessRunner.productsDirectory.appendingPathComponent("torture-writer"),
                ["contend", "--db", db, "--process", String(process), "--count", String(count), "--durability", "noMetaSync"])
        }
        for process in processes {
            // A process that failed says why on its stderr: the message shows it.
            #expect(try await process.waitForExit(timeout: .seconds(120)) == 0, "stderr: \(process.stderr)")
        }
        var wins: [String: [UInt64]] = [:]
        var conflicts = 0
        for (index, process) in processes.enumerated() {
            let lines = process.stdoutLines
            #expect(lines.last == "DONE")
            #expect(lines.count == count + 1)
            wins[String(index)] = lines.compactMap { $0.hasPrefix("OK ") ? UInt64($0.dropFirst(3)) : nil }
            conflicts += lines.filter { $0 == "CONFLICT" }.count
        }
        let store = try EventStore(path: db)
        defer { store.close() }
        #expect(try store.verify().isClean)
        let shared = try store.readStream("shared")
        // Versions 1...n with no gap, each event based on the version just before it (no lost update).
        #expect(shared.map(\.version) == Array(1...UInt64(shared.count)))
        for event in shared {
            let data = try JSONValue(parsing: Array(event.data))
            #expect(data["base"]?.intValue == Int64(event.version) - 1, "event \(event.version) was based on \(data["base"] ?? .null)")
            // The winner, and only the winner, was told it won this version.
            let process = try #require(data["process"]?.stringValue)
            #expect(wins[process]?.contains(event.version) == true)
        }
        #expect(wins.values.map(\.count).reduce(0, +) == shared.count)
        #expect(shared.count + conflicts == 4 * count)
        for process in 0..<4 {
            #expect(try store.readStream("own-\(process)").map(\.version) == Array(1...UInt64(count)))
        }
        print("figures: 4 processes: \(shared.count) contended appends won, \(conflicts) conflicts reported to the losers, \(4 * count) own appends")
    }
}
