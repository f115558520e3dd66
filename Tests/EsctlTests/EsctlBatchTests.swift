import Foundation
import Testing
import TestSupport

@Suite("esctl append --batch and exit codes")
struct EsctlBatchTests {
    let sandbox: EsctlSandbox
    var directory: TemporaryDirectory { sandbox.directory }

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-batch")
    }

    func esctl(_ arguments: [String], stdin: String? = nil) async throws -> ProcessOutput {
        try await sandbox.esctl(arguments, stdin: stdin)
    }

    func eventCount() async throws -> Int {
        try await sandbox.eventCount()
    }

    @Test("a batch is appended atomically, in input order, with one result per event")
    func batchInInputOrder() async throws {
        _ = try await esctl(["append", "camper-1", "CamperAdded"])
        let batch = """
            {"stream":"camper-1","type":"Reserved","data":{"site":15},"expectedVersion":1}
            {"stream":"site-15","type":"Booked","data":{"camper":1},"expectedVersion":"no-stream","metadata":{"by":"desk"}}

            {"stream":"camper-1","type":"Paid","data":{"amount":30},"id":"6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f"}
            """
        let output = try await esctl(["append", "--batch", "-", "--json"], stdin: batch)
        #expect(output.status == 0, "\(output)")
        #expect(output.lines == [
            #"{"position":2,"stream":"camper-1","version":2,"alreadyRecorded":false}"#,
            #"{"position":3,"stream":"site-15","version":1,"alreadyRecorded":false}"#,
            #"{"position":4,"stream":"camper-1","version":3,"alreadyRecorded":false}"#,
        ])
        let replay = try await esctl(["replay", "--json"])
        #expect(replay.lines.count == 4)
        #expect(replay.lines[2].contains(#""data":{"camper":1},"metadata":{"by":"desk"}"#))
        #expect(replay.lines[3].contains(#""id":"6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f""#))
    }

    @Test("a batch read from a file, retried with the same ids, returns the originals and writes nothing")
    func batchFromFileIsIdempotent() async throws {
        let file = directory.appending("batch.ndjson")
        try Data("""
            {"stream":"a","type":"T","data":{},"id":"00000000-0000-0000-0000-000000000001"}
            {"stream":"b","type":"T","data":[1,2],"id":"00000000-0000-0000-0000-000000000002"}
            """.utf8).write(to: URL(fileURLWithPath: file))
        let first = try await esctl(["append", "--batch", file])
        #expect(first.status == 0)
        #expect(first.lines == ["position 1, stream a at version 1", "position 2, stream b at version 1"])
        let retry = try await esctl(["append", "--batch", file, "--json"])
        #expect(retry.status == 0)
        #expect(retry.lines == [
            #"{"position":1,"stream":"a","version":1,"alreadyRecorded":true}"#,
            #"{"position":2,"stream":"b","version":1,"alreadyRecorded":true}"#,
        ])
        #expect(try await eventCount() == 2)
    }

    @Test("a malformed line is reported with its number and nothing is written", arguments: [
        ("{\"stream\":\"a\",\"type\":\"T\",\"data\":{}}\n{\"stream\":\"a\",\"type\":\"T\",\"data\":{oops}}", "Line 2"),
        ("{\"stream\":\"a\",\"type\":\"T\",\"data\":{}}\n\n{\"stream\":\"a\",\"data\":{}}", "Line 3"),
        ("{\"stream\":\"a\",\"type\":\"T\",\"data\":{},\"id\":\"nope\"}", "Line 1"),
        ("{\"stream\":\"a\",\"type\":\"T\",\"data\":{},\"expectedVersion\":\"later\"}", "Line 1"),
        ("{\"stream\":\"a\",\"type\":\"T\",\"data\":{}}\n{\"stream\":\"a\",\"type\":\"T\",\"data\":{},\"expectedVersion\":1}", "Line 2"),
        ("[1,2,3]", "Line 1"),
        ("{\"stream\":7,\"type\":\"T\",\"data\":{}}", "Line 1"),
        ("{\"stream\":\"a\",\"type\":\"T\",\"data\":{}} trailing", "Line 1"),
        // Valid JSON that breaks the store's limits is named by its line too.
        ("{\"stream\":\"a\",\"type\":\"T\",\"data\":{}}\n{\"stream\":\"\(String(repeating: "x", count: 250))\",\"type\":\"T\",\"data\":{}}", "Line 2 is not a valid event: the stream name is 250 bytes long"),
        ("{\"stream\":\"a\",\"type\":\"\",\"data\":{}}", "Line 1 is not a valid event: the event type name is empty"),
        // An expected version reads as everywhere: a sign is refused, with the same sentence.
        ("{\"stream\":\"a\",\"type\":\"T\",\"expectedVersion\":\"+5\"}",
         "Line 1 is not a valid event: \"expectedVersion\" takes any, no-stream, exists or a version number of 0 or more; '+5' is not one; nothing was written."),
        ("{\"stream\":\"a\",\"type\":\"T\",\"expectedVersion\":-1}", "Line 1 is not a valid event: \"expectedVersion\" takes any"),
        ("{\"stream\":\"a\",\"type\":\"T\",\"data\":{},\"id\":\"6F1C1A52-8A2B-4C3D-9E4F-0A1B2C3D4E5F\"}\n{\"stream\":\"b\",\"type\":\"T\",\"data\":{},\"id\":\"6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f\"}",
         "Line 2 repeats the id 6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f of line 1"),
    ])
    func malformedLine(_ batch: String, _ location: String) async throws {
        _ = try await esctl(["append", "existing", "T"])
        let output = try await esctl(["append", "--batch", "-"], stdin: batch)
        #expect(output.status == 64)
        #expect(output.stderr.contains(location), "\(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(try await eventCount() == 1)
    }

    @Test("a batch whose expectation fails writes nothing and exits 65 naming each stream")
    func batchConflict() async throws {
        _ = try await esctl(["append", "a", "T"])
        let batch = """
            {"stream":"b","type":"T","data":{}}
            {"stream":"a","type":"T","data":{},"expectedVersion":"no-stream"}
            {"stream":"c","type":"T","data":{},"expectedVersion":"exists"}
            """
        let output = try await esctl(["append", "--batch", "-"], stdin: batch)
        #expect(output.status == 65)
        #expect(output.stderr.contains("stream 'a' expected no stream but is at version 1"))
        #expect(output.stderr.contains("stream 'c' expected an existing stream but is at no stream"))
        #expect(try await eventCount() == 1)
    }

    @Test("a batch over the append limit is refused before anything is written")
    func batchOverTheLimit() async throws {
        let line = #"{"stream":"s","type":"T","data":{}}"#
        let output = try await esctl(["append", "--batch", "-"], stdin: Array(repeating: line, count: 10_001).joined(separator: "\n"))
        #expect(output.status == 64)
        #expect(output.stderr.contains("more than 10000 events"))
        #expect(try await eventCount() == 0)
        let atLimit = try await esctl(["append", "--batch", "-"], stdin: Array(repeating: line, count: 10_000).joined(separator: "\n"))
        #expect(atLimit.status == 0)
        #expect(try await eventCount() == 10_000)
    }

    @Test("--batch cannot be combined with a positional event or its options")
    func batchUsage() async throws {
        #expect(try await esctl(["append", "s", "T", "--batch", "-"], stdin: "").status == 64)
        #expect(try await esctl(["append", "--batch", "-", "--data", "{}"], stdin: "").status == 64)
        #expect(try await esctl(["append", "s"]).status == 64)
        let empty = try await esctl(["append", "--batch", "-"], stdin: "\n\n")
        #expect(empty.status == 64)
        #expect(empty.stderr.contains("no events"))
    }

    @Test("every exit code a script can get today, through the built binary")
    func exitCodes() async throws {
        let id = "6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f"
        #expect(try await esctl(["append", "s", "T", "--id", id]).status == 0)
        #expect(try await esctl(["append", "s", "T", "--data", "nope"]).status == 64)
        #expect(try await esctl(["frobnicate"]).status == 64)
        #expect(try await esctl(["append", "s", "T", "--expected-version", "5"]).status == 65)
        #expect(try await esctl(["append", "s", "Other", "--id", id]).status == 66)
        #expect(try await esctl(["read", "missing"]).status == 67)
        let file = directory.appending("not-a-dir")
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        #expect(try await ProcessRunner.esctl(["stats"], db: file).status == 69)
    }
}
