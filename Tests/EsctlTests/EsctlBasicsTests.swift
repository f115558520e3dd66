import EventStore
import Foundation
import Testing
import TestSupport

/// esctl end to end, through the built binary.
@Suite("esctl basics")
struct EsctlBasicsTests {
    let sandbox: EsctlSandbox
    var directory: TemporaryDirectory { sandbox.directory }
    var db: String { sandbox.db }

    init() throws {
        sandbox = try EsctlSandbox()
    }

    func esctl(_ arguments: String..., stdin: String? = nil) async throws -> ProcessOutput {
        try await sandbox.esctl(arguments, stdin: stdin)
    }

    func objects(_ output: ProcessOutput) throws -> [[String: Any]] {
        try sandbox.objects(output)
    }

    @Test("append prints the position and version, as text and as JSON")
    func appendPrints() async throws {
        let first = try await esctl("append", "orders-1", "OrderPlaced", "--data", #"{"total":12}"#)
        #expect(first.status == 0)
        #expect(first.stdout == "position 1, stream orders-1 at version 1\n")
        #expect(first.stderr.isEmpty)
        let second = try await esctl("append", "orders-1", "OrderPaid", "--json")
        #expect(second.status == 0)
        #expect(second.stdout == #"{"position":2,"stream":"orders-1","version":2,"alreadyRecorded":false}"# + "\n")
    }

    @Test("read and replay print one JSON object per line with the documented keys, in order")
    func jsonLines() async throws {
        _ = try await esctl("append", "orders-1", "OrderPlaced", "--data", "{\n  \"total\": 12\n}", "--metadata", #"{"by":"ann"}"#)
        _ = try await esctl("append", "chat-main", "Said", "--data", #""hi""#)
        _ = try await esctl("append", "orders-1", "OrderPaid", "--id", "6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f")

        let read = try await esctl("read", "orders-1", "--json")
        #expect(read.status == 0)
        let lines = read.lines
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix(#"{"position":1,"stream":"orders-1","version":1,"id":""#))
        // JSON is stored without the white space outside its strings (docs/FORMAT.md).
        #expect(lines[0].contains(#","type":"OrderPlaced","data":{"total":12},"metadata":{"by":"ann"},"recordedAt":""#))
        #expect(lines[1].contains(#""id":"6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f","type":"OrderPaid","data":{},"metadata":null,"#))
        let parsed = try objects(read)
        #expect(parsed.map { Array($0.keys).sorted() } == Array(repeating: ["data", "id", "metadata", "position", "recordedAt", "stream", "type", "version"], count: 2))
        let recordedAt = try #require(parsed[0]["recordedAt"] as? String)
        #expect(recordedAt.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/) != nil)

        let replay = try await esctl("replay", "--json")
        #expect(try objects(replay).map { $0["position"] as? Int } == [1, 2, 3])
        #expect(try objects(replay)[1]["data"] as? String == "hi")
        let backwards = try await esctl("read", "orders-1", "--backwards", "--json")
        #expect(try objects(backwards).map { $0["version"] as? Int } == [2, 1])
    }

    @Test("read and replay take --from, --to, --limit, --type, --category and --prefix")
    func readAndReplayOptions() async throws {
        for (stream, type) in [("a-1", "X"), ("b-1", "Y"), ("a-1", "Y"), ("a-2", "X"), ("a-1", "X")] {
            #expect(try await esctl("append", stream, type).status == 0)
        }
        func positions(_ output: ProcessOutput) throws -> [Int] { try objects(output).compactMap { $0["position"] as? Int } }
        #expect(try positions(try await esctl("replay", "--json", "--from", "2", "--to", "4")) == [2, 3, 4])
        #expect(try positions(try await esctl("replay", "--json", "--limit", "2")) == [1, 2])
        #expect(try positions(try await esctl("replay", "--json", "--type", "Y")) == [2, 3])
        #expect(try positions(try await esctl("replay", "--json", "--type", "Y", "--type", "X", "--category", "a-")) == [1, 3, 4, 5])
        #expect(try positions(try await esctl("replay", "--json", "--category", "a", "--limit", "2")) == [1, 3])
        #expect(try positions(try await esctl("replay", "--json", "--prefix", "a-1", "--limit", "2")) == [1, 3])
        let inner = try await esctl("replay", "--category", "a-1")
        #expect(inner.status == 64)
        #expect(inner.stderr.contains("so 'a-1' names none; use --prefix a-1"))
        #expect(try positions(try await esctl("read", "a-1", "--json", "--from", "2")) == [3, 5])
        #expect(try positions(try await esctl("read", "a-1", "--json", "--limit", "1")) == [1])
        #expect(try positions(try await esctl("read", "a-1", "--json", "--backwards", "--from", "2", "--limit", "5")) == [3, 1])
        #expect(try await esctl("read", "a-1", "--limit", "0").stdout.isEmpty)
    }

    @Test("the text format shows position, stream@version, type, time and data")
    func textFormat() async throws {
        _ = try await esctl("append", "orders-1", "OrderPlaced", "--data", #"{"total":12}"#)
        let output = try await esctl("replay")
        #expect(output.lines.count == 1)
        #expect(output.lines[0].wholeMatch(of: /1  orders-1@1  OrderPlaced  \d{4}-\d\d-\d\dT[\d:.]+Z  \{"total":12\}/) != nil)
    }

    @Test("stats reports counts, positions and sizes, with 0 for the positions of an empty store")
    func stats() async throws {
        #expect(try await esctl("init").stdout == "created an empty store at \(db)\n")
        let empty = try objects(try await esctl("stats", "--json"))
        #expect(empty.count == 1)
        #expect(empty[0]["eventCount"] as? Int == 0)
        #expect(empty[0]["headPosition"] as? Int == 0)
        #expect(empty[0]["firstPosition"] as? Int == 0)
        _ = try await esctl("append", "s", "T")
        _ = try await esctl("append", "t", "T")
        let stats = try objects(try await esctl("stats", "--json"))[0]
        #expect(stats["eventCount"] as? Int == 2)
        #expect(stats["streamCount"] as? Int == 2)
        #expect(stats["headPosition"] as? Int == 2)
        #expect(stats["firstPosition"] as? Int == 1)
        #expect((stats["fileSize"] as? Int ?? 0) > 0)
        #expect((stats["mapSize"] as? Int ?? 0) >= (stats["fileSize"] as? Int ?? 0))
        let text = try await esctl("stats")
        #expect(text.stdout.contains("events          2"))
    }

    @Test("data comes from the command line, a file or standard input; --id makes a retry idempotent")
    func dataSources() async throws {
        let file = directory.appending("data.json")
        try Data(#"{"from":"file"}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try await esctl("append", "s", "T", "--data", "@" + file).status == 0)
        #expect(try await esctl("append", "s", "T", "--data", "-", stdin: #"{"from":"stdin"}"#).status == 0)
        let id = "6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f"
        #expect(try await esctl("append", "s", "T", "--id", id).stdout == "position 3, stream s at version 3\n")
        let retry = try await esctl("append", "s", "T", "--id", id)
        #expect(retry.status == 0)
        #expect(retry.stdout == "position 3, stream s at version 3 (already recorded; nothing written)\n")
        let data = try objects(try await esctl("read", "s", "--json")).map { $0["data"] as? [String: String] }
        #expect(data == [["from": "file"], ["from": "stdin"], [:]])
    }

    @Test("the store defaults to $ESCTL_DB")
    func storeFromEnvironment() async throws {
        let output = try await ProcessRunner.run(
            ProcessRunner.esctl, ["append", "s", "T"], environment: ["ESCTL_DB": db])
        #expect(output.status == 0)
        #expect(FileManager.default.fileExists(atPath: db + "/data.mdb"))
    }

    @Test("errors: one sentence on stderr, the documented exit code, nothing written")
    func errors() async throws {
        _ = try await esctl("append", "s", "T", "--id", "6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f")
        let cases: [([String], Int32, String)] = [
            (["append", "s", "T", "--data", "{not json"], 64, "not valid JSON"),
            (["append", "s", "T", "--metadata", "[1,"], 64, "not valid JSON"),
            (["append", "s", "T", "--id", "not-a-uuid"], 64, "not a UUID"),
            (["append", "", "T"], 64, "stream name is empty"),
            (["append", "s", "T", "--expected-version", "7"], 65, "expected version 7 but is at version 1"),
            (["append", "s", "T", "--expected-version", "no-stream"], 65, "expected no stream but is at version 1"),
            (["append", "s", "Other", "--id", "6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f"], 66, "already recorded with other content"),
            (["read", "nobody"], 67, "has no events"),
            (["append", "s", "T", "--data", "@/nonexistent/file"], 64, "Cannot read the file"),
            (["append", "s", "T", "--expected-version", "soon"], 64, "--expected-version takes any, no-stream, exists or a version number of 0 or more; 'soon' is not one."),
            (["append", "s", "T", "--expected-version", "+5"], 64, "--expected-version takes any, no-stream, exists or a version number of 0 or more; '+5' is not one."),
            (["read", "s", "--limit=-1"], 64, "--limit takes a whole number of 0 or more; '-1' is not one."),
            (["read", "s", "--limit", "-1"], 64, "--limit takes a whole number of 0 or more; '-1' is not one."),
        ]
        for (arguments, status, message) in cases {
            let output = try await ProcessRunner.esctl(arguments, db: db)
            #expect(output.status == status, "\(arguments): \(output)")
            #expect(output.stderr.contains(message), "\(arguments): \(output.stderr)")
            #expect(output.stdout.isEmpty, "\(arguments)")
        }
        let stats = try objects(try await esctl("stats", "--json"))[0]
        #expect(stats["eventCount"] as? Int == 1)
        // Errors of esctl itself are exactly one line.
        let conflict = try await esctl("append", "s", "T", "--expected-version", "7")
        #expect(conflict.stderr.split(separator: "\n").count == 1)
        #expect(conflict.stderr.hasPrefix("esctl: "))
    }

    @Test("a store path that is a file, or a directory of other files, is unavailable (69)")
    func unavailableStore() async throws {
        let file = directory.appending("file")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let output = try await ProcessRunner.esctl(["stats"], db: file)
        #expect(output.status == 69)
        #expect(output.stderr.contains("is a file"))
        let other = directory.appending("other")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: other + "/notes.txt", contents: Data())
        #expect(try await ProcessRunner.esctl(["append", "s", "T"], db: other).status == 69)
    }

    @Test("--help lists the exit codes")
    func helpListsExitCodes() async throws {
        let output = try await ProcessRunner.run(ProcessRunner.esctl, ["--help"])
        #expect(output.status == 0)
        for code in ["0 ", "1 ", "64", "65", "66", "67", "69", "70", "75", "130"] {
            #expect(output.stdout.contains("  \(code)"), "exit code \(code) missing from --help")
        }
    }

    @Test("every command's help is plain text: no stray line-continuation backslashes")
    func helpTextsAreClean() async throws {
        let commands = [
            "append", "read", "replay", "subscribe", "stats", "import", "export", "projections", "rebuild", "query", "verify",
            "backup", "fitness", "alerts", "chat", "camp",
        ]
        for command in commands {
            let output = try await ProcessRunner.run(ProcessRunner.esctl, ["help", command])
            #expect(output.status == 0, "\(command): \(output)")
            #expect(output.stdout.contains("USAGE: esctl \(command)"), "\(command)")
            #expect(!output.stdout.contains("\\"), "esctl help \(command) shows a backslash:\n\(output.stdout)")
        }
    }

    @Test("another process's map growth is adopted by a store open in this one")
    func adoptsAnotherProcessGrowth() async throws {
        // Given a store open here with a 1 MiB map
        let store = try EventStore(path: db, configuration: StoreConfiguration(durability: .noSync, initialMapSize: 1 << 20))
        defer { store.close() }
        _ = try await store.append(to: "here", events: [NewEvent(type: "T", data: Data("{}".utf8))])
        // When another process appends 4 MiB, growing the map
        let big = "\"" + String(repeating: "x", count: 4 << 20) + "\""
        let file = directory.appending("big.json")
        try Data(big.utf8).write(to: URL(fileURLWithPath: file))
        let child = try await esctl("append", "there", "Big", "--data", "@" + file)
        #expect(child.status == 0, "\(child)")
        // Then this process reads the event and appends after it
        #expect(try store.event(at: 2)?.data.count == big.utf8.count)
        let next = try await store.append(to: "here", events: [NewEvent(type: "T", data: Data(count: 2 << 20))])
        #expect(next.positions == [3])
        #expect(try store.statistics().mapSize >= 4 << 20)
    }
}
