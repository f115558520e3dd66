import EventStore
import Foundation
import Testing
import TestSupport

/// export and import make an exact copy: the same log, the same projections' hashes; the same
/// JSON is the same content however it is spaced.
@Suite("esctl exact copies")
struct EsctlExactCopyTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-copy")
    }

    /// Each projection's name and state hash after `esctl rebuild --all --json`.
    func hashes(_ db: String) async throws -> [String: String] {
        let output = try await ProcessRunner.esctl(["rebuild", "--all", "--json"], db: db)
        #expect(output.status == 0, "\(output)")
        var hashes: [String: String] = [:]
        for object in try sandbox.objects(output) {
            if let name = object["name"] as? String, let hash = object["hash"] as? String { hashes[name] = hash }
        }
        return hashes
    }

    /// The three apps' commands, chat messages (whose dates are recorded times) among them.
    func seedApps() async throws {
        for arguments in [
            ["fitness", "goal", "400"], ["fitness", "start"], ["fitness", "walk", "--steps", "150", "--distance", "90"],
            ["chat", "connect", "--user", "ann"], ["chat", "say", "hello there", "--user", "ann"],
            ["chat", "countdown", "Go!", "--user", "bob", "--interval", "0.01"],
            ["camp", "add-camper", "Johnny Appleseed", "408-555-1234"], ["camp", "add-site", "15"],
            ["camp", "reserve", "--site", "15", "--camper", "C1", "--date", "2026-07-01", "--nights", "2"],
        ] {
            let output = try await sandbox.esctl(arguments)
            #expect(output.status == 0, "\(arguments): \(output)")
        }
    }

    @Test("export, import into an empty store, export: byte-identical, and every projection's rebuild hash is equal")
    func roundTripOfTheApps() async throws {
        // Given the apps' history
        try await seedApps()
        let exported = try await sandbox.esctl("export")
        #expect(exported.status == 0)
        // When it is imported into an empty store (days later: the importer's clock is not used)
        let copy = sandbox.directory.appending("copy")
        let imported = try await ProcessRunner.esctl(["import", "-"], db: copy, stdin: Data(exported.stdout.utf8))
        #expect(imported.status == 0, "\(imported)")
        // Then the copy's export is the same bytes, and the read models hash the same
        #expect(try await ProcessRunner.esctl(["export"], db: copy).stdout == exported.stdout)
        let original = try await hashes(sandbox.db)
        #expect(original.count == 9)
        #expect(try await hashes(copy) == original)
        // The chat's dates are the original ones, not the import's
        let messages = try await ProcessRunner.esctl(["query", "messages", "--json"], db: copy)
        #expect(messages.stdout == (try await sandbox.esctl("query", "messages", "--json")).stdout)
    }

    @Test("into a non-empty store events keep everything but their positions, and their versions where the stream has events")
    func importIntoNonEmptyStore() async throws {
        #expect(try await sandbox.esctl("append", "a", "First", "--data", #"{"n":1}"#).status == 0)
        #expect(try await sandbox.esctl("append", "b", "Only").status == 0)
        let exported = try sandbox.objects(try await sandbox.esctl("export"))
        let other = sandbox.directory.appending("other")
        #expect(try await ProcessRunner.esctl(["append", "a", "Before"], db: other).status == 0)
        let input = try await sandbox.esctl("export")
        #expect(try await ProcessRunner.esctl(["import", "-"], db: other, stdin: Data(input.stdout.utf8)).status == 0)
        let copied = try sandbox.objects(try await ProcessRunner.esctl(["export", "--from", "2"], db: other))
        #expect(copied.map { $0["position"] as? Int } == [2, 3])
        #expect(copied.map { $0["version"] as? Int } == [2, 1])
        for (copy, original) in zip(copied, exported) {
            for key in ["stream", "id", "type", "recordedAt", "metadata"] {
                #expect(copy[key] as? String == original[key] as? String, "\(key)")
            }
            #expect((copy["data"] as? NSObject) == (original["data"] as? NSObject))
        }
    }

    @Test("schema versions: append --schema-version records one, read --json shows it (not when 1), export and import keep it, a bad one is refused")
    func schemaVersions() async throws {
        // Given an event of schema version 3 and one of version 1
        #expect(try await sandbox.esctl("append", "t-1", "Added", "--schema-version", "3", "--data", #"{"a":1}"#).status == 0)
        #expect(try await sandbox.esctl("append", "t-1", "Added").status == 0)
        // When they are read, then the first says its version and the second says none
        let read = try sandbox.objects(try await sandbox.esctl("read", "t-1", "--json"))
        #expect(read.map { $0["schemaVersion"] as? Int } == [3, nil])
        // When the log is exported and imported into an empty store, then the copy is the same bytes
        let exported = try await sandbox.esctl("export")
        let copy = sandbox.directory.appending("copy")
        #expect(try await ProcessRunner.esctl(["import", "-"], db: copy, stdin: Data(exported.stdout.utf8)).status == 0)
        #expect(try await ProcessRunner.esctl(["export"], db: copy).stdout == exported.stdout)
        #expect(exported.stdout.contains(#""schemaVersion":3"#))
        // A batch line may give one; 0 or more than 65535 is refused with its line, and nothing is written
        let batch = #"{"stream":"t-2","type":"Added","schemaVersion":2}"#
        #expect(try await sandbox.esctl(["append", "--batch", "-"], stdin: batch + "\n").status == 0)
        #expect(try sandbox.objects(try await sandbox.esctl("read", "t-2", "--json")).first?["schemaVersion"] as? Int == 2)
        for bad in ["0", "65536", "\"2\"", "1.5"] {
            let refused = try await sandbox.esctl(["append", "--batch", "-"], stdin: #"{"stream":"t-3","type":"Added","schemaVersion":"# + bad + "}\n")
            #expect(refused.status == 64, "\(bad): \(refused)")
            #expect(refused.stderr == #"esctl: Line 1 is not a valid event: "schemaVersion" must be a whole number from 1 to 65535; nothing was written."# + "\n", "\(bad)")
        }
        let zero = try await sandbox.esctl("append", "t-3", "Added", "--schema-version", "0")
        #expect(zero.status == 64)
        #expect(try await sandbox.esctl("read", "t-3").status != 0, "nothing was written to t-3")
    }

    @Test("--restamp gives every event the importer's clock; a bad recordedAt stops the import at its line")
    func restampAndBadTimes() async throws {
        let line = #"{"stream":"s","type":"T","data":{},"recordedAt":"2001-02-03T04:05:06.000007Z"}"#
        #expect(try await sandbox.esctl(["import", "-"], stdin: line + "\n").status == 0)
        #expect(try sandbox.objects(try await sandbox.esctl("export"))[0]["recordedAt"] as? String == "2001-02-03T04:05:06.000007Z")
        let other = sandbox.directory.appending("restamped")
        let started = Date()
        #expect(try await ProcessRunner.esctl(["import", "-", "--restamp"], db: other, stdin: Data((line + "\n").utf8)).status == 0)
        let stamped = try #require(try sandbox.objects(try await ProcessRunner.esctl(["export"], db: other))[0]["recordedAt"] as? String)
        let micros = try #require(ISO8601.microseconds(parsing: stamped))
        #expect(Double(micros) / 1e6 >= started.timeIntervalSince1970 - 1)
        let bad = try await sandbox.esctl(["import", "-"], stdin: #"{"stream":"s","type":"T","data":{},"recordedAt":"yesterday"}"# + "\n")
        #expect(bad.status == 64)
        #expect(bad.stderr.hasPrefix(#"esctl: Line 1 is not a valid event: "recordedAt" must be an ISO 8601 time such as 2026-11-22T08:30:00.000000Z."#), "\(bad.stderr)")
    }

    @Test("an export re-serialized with other spacing imports into the same store as already recorded")
    func respacedExportIsTheSameContent() async throws {
        #expect(try await sandbox.esctl("append", "s", "T", "--data", "{ \"a\" : [1, 2] }", "--metadata", "{\"by\": \"ann\"}").status == 0)
        #expect(try await sandbox.esctl("append", "s", "T", "--data", #"{"text":"two  spaces"}"#).status == 0)
        let exported = try await sandbox.esctl("export")
        // The way `jq` spaces JSON: a space after every colon and comma outside strings.
        let respaced = exported.lines.map { line in
            line.replacingOccurrences(of: "\":", with: "\": ").replacingOccurrences(of: ",\"", with: ", \"")
        }.joined(separator: "\n")
        #expect(respaced != exported.stdout)
        let again = try await sandbox.esctl(["import", "-", "--json"], stdin: respaced + "\n")
        #expect(again.status == 0, "\(again)")
        #expect(try sandbox.objects(again)[0]["alreadyRecorded"] as? Int == 2)
        #expect(try await sandbox.esctl("export").stdout == exported.stdout)
        // And an append with a known id and differently spaced JSON is the event already recorded
        let id = "6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f"
        #expect(try await sandbox.esctl("append", "t", "T", "--id", id, "--data", #"{"x":1}"#).status == 0)
        let retried = try await sandbox.esctl("append", "t", "T", "--id", id, "--data", "{\n  \"x\": 1\n}", "--json")
        #expect(retried.status == 0)
        #expect(try sandbox.objects(retried)[0]["alreadyRecorded"] as? Bool == true)
    }

    @Test("import --json prints its summary on standard output also when it stops at a bad line")
    func jsonSummaryWhenStopped() async throws {
        let input = [#"{"stream":"s","type":"T","data":{}}"#, #"{"stream":"s","type":"T","data":{}}"#, "{oops"].joined(separator: "\n")
        let output = try await sandbox.esctl(["import", "-", "--json"], stdin: input + "\n")
        #expect(output.status == 64)
        #expect(output.stderr.hasPrefix("esctl: Line 3 is not a valid event: "))
        let summary = try #require(try sandbox.objects(output).first)
        #expect(summary["imported"] as? Int == 2)
        #expect(summary["lines"] as? Int == 2)
        #expect(summary["headPosition"] as? Int == 2)
    }
}
