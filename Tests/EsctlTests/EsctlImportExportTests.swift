import EventStore
import Foundation
import Testing
import TestSupport

@Suite("esctl import and export")
struct EsctlImportExportTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-import")
    }

    @Test("export, then import into a new store, gives the same log: an export of the copy is byte for byte the same")
    func roundTrip() async throws {
        // Given a store with interleaved streams, metadata, ids, and bytes that are not JSON
        let batch = """
            {"stream":"a","type":"T","data":{"x":1},"metadata":{"by":"ann"},"id":"00000000-0000-0000-0000-00000000000a"}
            {"stream":"b","type":"U","data":[1,"two",null]}
            {"stream":"a","type":"V","data":"text"}
            """
        #expect(try await sandbox.esctl(["append", "--batch", "-"], stdin: batch).status == 0)
        let store = try EventStore(path: sandbox.db)
        _ = try await store.append(to: "c", events: [NewEvent(type: "Binary", data: Data([0, 1, 2, 255]), metadata: Data([9, 9]))])
        await store.close()
        let exported = try await sandbox.esctl(["export"])
        #expect(exported.status == 0 && exported.lines.count == 4)
        // When it is imported into a new store
        let copy = sandbox.directory.appending("copy")
        let imported = try await ProcessRunner.esctl(["import", "-"], db: copy, stdin: Data(exported.stdout.utf8))
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.hasPrefix("Imported 4 events from 4 lines"))
        // Then the log is the same, recorded times included: an export of the copy is the same bytes
        let again = try await ProcessRunner.esctl(["export"], db: copy)
        #expect(again.stdout == exported.stdout)
        let reopened = try EventStore(path: copy)
        defer { reopened.close() }
        #expect(try reopened.readStream("c").first?.data == Data([0, 1, 2, 255]))
        #expect(try reopened.readStream("c").first?.metadata == Data([9, 9]))
    }

    @Test("binary data, even bytes that are JSON with white space, is exported as base64 and imported byte for byte, still binary")
    func binaryRoundTrip() async throws {
        // Given binary data that happens to be JSON with white space, and JSON data spaced alike
        let bytes = Data("{ \"a\" : 1 }".utf8)
        let store = try EventStore(path: sandbox.db)
        _ = try await store.append(to: "dcb", events: [NewEvent(type: "Bin", data: bytes, dataFormat: .binary)])
        _ = try await store.append(to: "j", events: [NewEvent(type: "Json", data: bytes)])
        await store.close()
        // When it is exported and imported into a new store
        let exported = try await sandbox.esctl(["export"])
        #expect(exported.status == 0 && exported.lines.count == 2)
        let copy = sandbox.directory.appending("copy-binary")
        let imported = try await ProcessRunner.esctl(["import", "-"], db: copy, stdin: Data(exported.stdout.utf8))
        #expect(imported.status == 0, "\(imported)")
        // Then the binary event is base64 in the export and keeps its bytes and format; the
        // JSON one is JSON, compacted
        #expect(exported.lines.first?.contains(#""dataEncoding":"base64""#) == true)
        #expect(exported.lines.last?.contains(#""data":{"a":1}"#) == true)
        let reopened = try EventStore(path: copy)
        defer { reopened.close() }
        let binary = try reopened.readStream("dcb").first
        #expect(binary?.data == bytes && binary?.dataFormat == .binary)
        #expect(try reopened.readStream("j").first?.dataFormat == .json)
        #expect(try await ProcessRunner.esctl(["export"], db: copy).stdout == exported.stdout)
    }

    @Test("export takes --from, --to, --category and --type")
    func exportFilters() async throws {
        for (stream, type) in [("a-1", "X"), ("b-1", "Y"), ("a-2", "Y"), ("a-1", "X")] {
            #expect(try await sandbox.esctl(["append", stream, type]).status == 0)
        }
        let positions = { (arguments: [String]) async throws -> [Int] in
            try self.sandbox.objects(try await self.sandbox.esctl(["export"] + arguments)).compactMap { $0["position"] as? Int }
        }
        #expect(try await positions(["--from", "2", "--to", "3"]) == [2, 3])
        #expect(try await positions(["--category", "a-"]) == [1, 3, 4])
        #expect(try await positions(["--type", "Y"]) == [2, 3])
    }

    @Test("a malformed line stops the import; everything before it is kept and --skip resumes")
    func malformedLine() async throws {
        var lines = (1...10).map { #"{"stream":"s","type":"T","data":{"n":\#($0)}}"# }
        lines[4] = #"{"stream":"s","type":"T","data":{"n":5}"#
        let file = sandbox.directory.appending("events.ndjson")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let output = try await sandbox.esctl(["import", file, "--batch-size", "3"])
        #expect(output.status == 64)
        #expect(output.stderr.hasPrefix("esctl: Line 5 is not a valid event: "))
        #expect(output.stderr.contains(". Imported 4 events from 4 lines in "), "\(output.stderr)")
        #expect(output.stderr.contains("resume with --skip 4"))
        #expect(try await sandbox.eventCount() == 4)
        lines[4] = #"{"stream":"s","type":"T","data":{"n":5}}"#
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let resumed = try await sandbox.esctl(["import", file, "--skip", "4"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stdout.hasPrefix("Imported 6 events from 6 lines after skipping 4 in "), "\(resumed.stdout)")
        let values = try sandbox.objects(try await sandbox.esctl(["read", "s", "--json"])).compactMap { ($0["data"] as? [String: Int])?["n"] }
        #expect(values == Array(1...10))
        // A bad line right after the skipped ones names itself, not "nothing to import".
        let bad = sandbox.directory.appending("bad-after-skip.ndjson")
        try Data((lines.prefix(4) + [#"{"stream":"s""#]).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: bad))
        let stopped = try await sandbox.esctl(["import", bad, "--skip", "4"])
        #expect(stopped.status == 64 && stopped.stderr.hasPrefix("esctl: Line 5 is not a valid event: "), "\(stopped)")
        #expect(stopped.stderr.contains(". Imported 0 events from 0 lines after skipping 4 in ") && stopped.stderr.contains("resume with --skip 4."), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains("Imported nothing"))
        // Skipping past the end imports nothing, and says so.
        let past = try await sandbox.esctl(["import", file, "--skip", "99"])
        #expect(past.status == 0 && past.stdout.hasPrefix("Imported nothing: --skip 99 passes over all 10 lines of the input."), "\(past)")
        #expect(try await sandbox.eventCount() == 10)
    }

    @Test("a line the store refuses (a name too long) stops the import at that line, like a malformed one")
    func refusedLine() async throws {
        var lines = (1...6).map { #"{"stream":"s","type":"T","data":{"n":\#($0)}}"# }
        lines[2] = #"{"stream":"\#(String(repeating: "x", count: 250))","type":"T","data":{}}"#
        let file = sandbox.directory.appending("long.ndjson")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let output = try await sandbox.esctl(["import", file])
        #expect(output.status == 64)
        #expect(output.stderr.hasPrefix("esctl: Line 3 is not a valid event: the stream name is 250 bytes long"), "\(output.stderr)")
        #expect(output.stderr.contains(". Imported 2 events from 2 lines in ") && output.stderr.contains("resume with --skip 2"), "\(output.stderr)")
        #expect(try await sandbox.eventCount() == 2)
    }

    @Test("a recorded id with other content stops the import at its line; the new events before it are kept, none twice on resume")
    func conflictInsideABatch() async throws {
        // Given a store holding one event with a known id
        let id = "6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f"
        #expect(try await sandbox.esctl(["append", "s", "T", "--data", #"{"n":0}"#, "--id", id]).status == 0)
        // When one batch holds new lines, the recorded event, and then its id with other data
        let lines = [
            #"{"stream":"n","type":"New","data":{"x":1}}"#,
            #"{"stream":"s","type":"T","data":{"n":0},"id":"\#(id)"}"#,
            #"{"stream":"n","type":"New","data":{"x":2}}"#,
            #"{"stream":"s","type":"T","data":{"n":99},"id":"\#(id.uppercased())"}"#,
            #"{"stream":"n","type":"New","data":{"x":3}}"#,
        ]
        let file = sandbox.directory.appending("conflict.ndjson")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let output = try await sandbox.esctl(["import", file])
        // Then the conflict is named by its line and id (as export writes ids), with how to resume
        #expect(output.status == 66)
        #expect(output.stderr.hasPrefix("esctl: Line 4: The event id \(id) is already recorded with other content (at position 1)"), "\(output.stderr)")
        #expect(output.stderr.contains("Imported 2 events from 3 lines (1 already recorded, passed over) in "), "\(output.stderr)")
        #expect(output.stderr.contains("resume with --skip 3."), "\(output.stderr)")
        let kept = try sandbox.objects(try await sandbox.esctl(["read", "n", "--json"])).compactMap { ($0["data"] as? [String: Int])?["x"] }
        #expect(kept == [1, 2])
        // And resuming after the line imports the rest once
        let resumed = try await sandbox.esctl(["import", file, "--skip", "4", "--json"])
        #expect(resumed.status == 0 && resumed.stdout.contains(#""imported":1,"alreadyRecorded":0"#), "\(resumed)")
        let all = try sandbox.objects(try await sandbox.esctl(["read", "n", "--json"])).compactMap { ($0["data"] as? [String: Int])?["x"] }
        #expect(all == [1, 2, 3])
        #expect(try await sandbox.eventCount() == 4)
    }

    @Test("an event given twice in one file is imported once, in one run")
    func sameEventTwiceInAFile() async throws {
        let line = #"{"stream":"d","type":"T","data":{},"id":"21111111-2222-4333-8444-555555555555"}"#
        let other = #"{"stream":"d","type":"U","data":{}}"#
        let file = sandbox.directory.appending("twice.ndjson")
        try Data([line, other, line].joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        let output = try await sandbox.esctl(["import", file, "--json"])
        #expect(output.status == 0 && output.stdout.contains(#""imported":2,"alreadyRecorded":1"#), "\(output)")
        #expect(try await sandbox.eventCount() == 2)
    }

    @Test("importing again, or from an earlier line, passes over events with recorded ids")
    func idempotentImport() async throws {
        let lines = (1...7).map { #"{"stream":"s-\#($0 % 2)","type":"T","data":{},"id":"00000000-0000-0000-0000-00000000000\#($0)"}"# }
        let file = sandbox.directory.appending("ids.ndjson")
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await sandbox.esctl(["import", file, "--batch-size", "3", "--json"]).stdout.contains(#""imported":7,"alreadyRecorded":0"#))
        let again = try await sandbox.esctl(["import", file, "--batch-size", "3", "--json"])
        #expect(again.stdout.contains(#""imported":0,"alreadyRecorded":7"#), "\(again)")
        let offset = try await sandbox.esctl(["import", file, "--skip", "2", "--batch-size", "4", "--json"])
        #expect(offset.stdout.contains(#""imported":0,"alreadyRecorded":5"#), "\(offset)")
        #expect(try await sandbox.eventCount() == 7)
    }

    @Test("100,000 events import in one run")
    func hundredThousand() async throws {
        var text = ""
        text.reserveCapacity(100_000 * 80)
        for n in 0..<100_000 {
            text += #"{"stream":"s-\#(n % 1000)","type":"T","data":{"n":\#(n)}}"#
            text += "\n"
        }
        let file = sandbox.directory.appending("big.ndjson")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let output = try await sandbox.esctl(["import", file, "--json"], timeout: .seconds(300))
        #expect(output.status == 0, "\(output)")
        #expect(output.stdout.contains(#""imported":100000"#))
        let stats = try sandbox.objects(try await sandbox.esctl(["stats", "--json"]))[0]
        #expect(stats["eventCount"] as? Int == 100_000 && stats["streamCount"] as? Int == 1000)
        let last = try sandbox.objects(try await sandbox.esctl(["read", "s-999", "--backwards", "--limit", "1", "--json"]))
        #expect(last.first?["version"] as? Int == 100 && (last.first?["data"] as? [String: Int])?["n"] == 99_999)
    }
}
