import Foundation
import Testing
import TestSupport

/// esctl behaves like the command-line tools people know, and text from the log cannot take
/// over the terminal.
@Suite("esctl conventions")
struct EsctlConventionsTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-conventions")
    }

    /// Runs esctl with exactly these arguments (no --db added).
    func raw(_ arguments: [String], stdin: String? = nil) async throws -> ProcessOutput {
        try await ProcessRunner.run(ProcessRunner.esctl, arguments, stdin: stdin.map { Data($0.utf8) })
    }

    @Test("--db, --durability and --json may come before the command")
    func sharedOptionsFirst() async throws {
        #expect(try await raw(["--db", sandbox.db, "--durability", "no-sync", "append", "s", "T"]).status == 0)
        let stats = try await raw(["--db=\(sandbox.db)", "--json", "stats"])
        #expect(stats.status == 0, "\(stats)")
        #expect(try sandbox.objects(stats).first?["eventCount"] as? Int == 1)
    }

    @Test("--version prints the version and the store format")
    func version() async throws {
        let output = try await raw(["--version"])
        #expect(output.status == 0)
        #expect(output.stdout.wholeMatch(of: /esctl \d+\.\d+\.\d+ \(store format 4\)\n/) != nil, "\(output.stdout)")
    }

    @Test("an unknown command exits 64 naming it and the closest command", arguments: [
        (["apend", "s", "T"], "Unknown command 'apend'. Did you mean 'append'?"),
        (["help", "nosuch"], "Unknown command 'nosuch'. The commands are: init, append,"),
        (["camp", "reservee"], "Unknown command 'camp reservee'. Did you mean 'camp reserve'?"),
        (["stat"], "Unknown command 'stat'. Did you mean 'stats'?"),
    ])
    func unknownCommand(arguments: [String], message: String) async throws {
        let output = try await raw(arguments)
        #expect(output.status == 64)
        #expect(output.stderr.hasPrefix("esctl: " + message), "\(output.stderr)")
        #expect(output.stderr.split(separator: "\n").count == 1)
    }

    @Test("--durability is an option of the commands that write only")
    func durabilityOnlyWhereItMeansSomething() async throws {
        #expect(try await sandbox.esctl("append", "s", "T", "--durability", "no-sync").status == 0)
        for command in [["stats"], ["read", "s"], ["replay"], ["verify"], ["export"], ["query", "app-state"]] {
            let output = try await sandbox.esctl(command + ["--durability", "no-sync"])
            #expect(output.status == 64, "\(command): \(output)")
            #expect(output.stderr.contains("--durability"), "\(command)")
        }
    }

    @Test("--log-level logs to standard error from that level up, before or after the command; silent by default")
    func logLevel() async throws {
        #expect(try await sandbox.esctl("fitness", "goal", "5", "--user", "z").status == 0)
        #expect(try await sandbox.esctl("append", "fitness-z", "PedometerUpdated", "--data", #"{"steps":"x"}"#).status == 0)
        let quiet = try await sandbox.esctl("fitness", "start", "--user", "z")
        #expect(!quiet.stderr.contains("[Commands]"))
        let logged = try await sandbox.esctl("--log-level", "info", "fitness", "pause", "--user", "z")
        #expect(logged.status == 0)
        #expect(logged.stderr.contains("info esctl:") && logged.stderr.contains("passed over an event the decider cannot read"))
        #expect(logged.stderr.contains("eventstore.position=2"))
        let above = try await sandbox.esctl("fitness", "start", "--user", "z", "--log-level", "warning")
        #expect(!above.stderr.contains("passed over an event the decider cannot read"))
        let bad = try await sandbox.esctl("stats", "--log-level", "loud")
        #expect(bad.status == 64 && bad.stderr.contains("'loud' is invalid for '--log-level"))
    }

    @Test("batch lines default data to {}; --metadata - reads standard input; a byte-order mark is passed over")
    func inputConveniences() async throws {
        let batch = "\u{FEFF}" + #"{"stream":"s","type":"NoData"}"# + "\n" + #"{"stream":"s","type":"WithData","data":[1]}"#
        #expect(try await sandbox.esctl(["append", "--batch", "-"], stdin: batch).status == 0)
        let imported = try await sandbox.esctl(["import", "-"], stdin: "\u{FEFF}" + #"{"stream":"t","type":"Imported"}"# + "\n")
        #expect(imported.status == 0, "\(imported)")
        let fromStdin = try await sandbox.esctl(["append", "s", "Meta", "--metadata", "-"], stdin: #"{"by":"ann"}"#)
        #expect(fromStdin.status == 0, "\(fromStdin)")
        let both = try await sandbox.esctl(["append", "s", "T", "--data", "-", "--metadata", "-"], stdin: "{}")
        #expect(both.status == 64 && both.stderr.contains("Only one of --data and --metadata can read standard input"))
        let events = try sandbox.objects(try await sandbox.esctl("replay", "--json"))
        #expect(events.map { $0["type"] as? String } == ["NoData", "WithData", "Imported", "Meta"])
        #expect((events[0]["data"] as? [String: Any])?.isEmpty == true)
        #expect((events[3]["metadata"] as? [String: String]) == ["by": "ann"])
    }

    @Test("text from the log is escaped in tables and lines; --json keeps it exact")
    func controlCharactersAreEscaped() async throws {
        let hostile = "hi\u{1B}[31mRED\u{07}\r\nnext \u{202E}evil\u{9B}"
        #expect(try await sandbox.esctl("chat", "say", hostile, "--user", "mallory").status == 0)
        let table = try await sandbox.esctl("query", "messages")
        #expect(table.status == 0)
        for forbidden in ["\u{1B}", "\u{07}", "\r", "\u{202E}", "\u{9B}"] {
            #expect(!table.stdout.contains(forbidden), "the table shows \(forbidden.unicodeScalars.first!.value) raw")
        }
        #expect(table.stdout.contains(#"hi\u{1B}[31mRED\u{7}\r\nnext \u{202E}evil\u{9B}"#), "\(table.stdout)")
        let line = try await sandbox.esctl("replay")
        #expect(!line.stdout.contains("\u{1B}") && !line.stdout.contains("\u{202E}"), "\(line.stdout)")
        let json = try await sandbox.esctl("query", "messages", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let messages = try #require(object["messages"] as? [[String: Any]])
        #expect(messages.first?["text"] as? String == hostile)
    }

    @Test("table columns line up under headers of more than one word")
    func alignedHeaders() async throws {
        #expect(try await sandbox.esctl("append", "a-stream-with-a-long-name", "T").status == 0)
        let output = try await sandbox.esctl("query", "stream-summary")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.first { $0.hasPrefix("STREAM") || $0.contains("FIRST POSITION") })
        let row = try #require(lines.first { $0.contains("a-stream-with-a-long-name") })
        // Every column starts where its header starts.
        for title in ["FIRST POSITION", "LAST POSITION", "LAST TYPE"] {
            let column = try #require(header.range(of: title)).lowerBound.utf16Offset(in: header)
            let before = row.index(row.startIndex, offsetBy: column - 1)
            #expect(row[before] == " ", "\(title) starts at \(column) in:\n\(header)\n\(row)")
        }
    }

    @Test("projections: a projection is building only while a rebuild is under way; listing them rebuilds nothing")
    func buildingMeansUnderWay() async throws {
        #expect(try await sandbox.esctl("init").status == 0)
        let fresh = try sandbox.objects(try await sandbox.esctl("projections", "--json"))
        #expect(!fresh.isEmpty && fresh.allSatisfy { $0["building"] as? Bool == false }, "\(fresh)")
        #expect(fresh.allSatisfy { $0["checkpoint"] as? Int == 0 })
    }
}
