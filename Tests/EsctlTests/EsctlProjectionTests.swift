import Foundation
import Testing
import TestSupport

@Suite("esctl projections, rebuild and query")
struct EsctlProjectionTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-projections")
    }

    func append(_ stream: String, _ type: String) async throws {
        #expect(try await sandbox.esctl(["append", stream, type]).status == 0)
    }

    @Test("a query in a new esctl process reflects every append made before it")
    func queryReflectsAppends() async throws {
        try await append("s-1", "A")
        try await append("s-2", "B")
        let first = try await sandbox.esctl(["query", "count-by-type", "--json"])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout == #"{"types":{"A":1,"B":1},"total":2}"# + "\n")
        try await append("s-1", "A")
        let second = try await sandbox.esctl(["query", "count-by-type", "--json"])
        #expect(second.stdout == #"{"types":{"A":2,"B":1},"total":3}"# + "\n")
        let text = try await sandbox.esctl(["query", "count-by-type"])
        #expect(text.lines == ["types.A  2", "types.B  1", "total    3"])
    }

    @Test("projections lists name, version, checkpoint, lag and hash without catching up")
    func projectionsList() async throws {
        try await append("s", "A")
        let all = try sandbox.objects(try await sandbox.esctl(["projections", "--json"]))
        #expect(all.map { $0["name"] as? String } == [
            "app-state", "alerts", "messages", "campers", "campsites", "reservations", "color", "count-by-type", "stream-summary",
        ])
        let before = all.suffix(2)
        #expect(before.map { $0["lag"] as? Int } == [1, 1])
        #expect(before.map { $0["checkpoint"] as? Int } == [0, 0])
        _ = try await sandbox.esctl(["query", "count-by-type"])
        let after = try sandbox.objects(try await sandbox.esctl(["projections", "--json"])).suffix(2)
        #expect(after.map { $0["checkpoint"] as? Int } == [1, 0])
        #expect(after.map { $0["lag"] as? Int } == [0, 1])
        #expect(after.allSatisfy { ($0["hash"] as? String)?.count == 64 && $0["version"] as? Int == 1 })
        let text = try await sandbox.esctl(["projections"])
        #expect(text.lines.first?.hasPrefix("NAME") == true)
        #expect(text.lines.count == 10)
    }

    @Test("rebuild reports events applied, seconds and the same hash as the live state")
    func rebuild() async throws {
        for n in 0..<6 { try await append("s-\(n % 2)", "T\(n % 3)") }
        _ = try await sandbox.esctl(["query", "stream-summary"])
        let live = Array(try sandbox.objects(try await sandbox.esctl(["projections", "--json"])).suffix(2))
        let output = try await sandbox.esctl(["rebuild", "--all", "--json"])
        #expect(output.status == 0, "\(output)")
        #expect(output.stderr.isEmpty)  // no progress when piped
        let reports = Array(try sandbox.objects(output).suffix(2))
        #expect(reports.map { $0["name"] as? String } == ["count-by-type", "stream-summary"])
        #expect(reports.map { $0["eventsApplied"] as? Int } == [6, 6])
        #expect(reports.allSatisfy { $0["seconds"] is Double || $0["seconds"] is Int })
        #expect(reports[1]["hash"] as? String == live[1]["hash"] as? String)
        let one = try await sandbox.esctl(["rebuild", "stream-summary"])
        #expect(one.lines.count == 1 && one.lines[0].hasPrefix("stream-summary: 6 events applied in "))
        #expect(try await sandbox.esctl(["rebuild"]).status == 64)
        #expect(try await sandbox.esctl(["rebuild", "nope"]).status == 67)
    }

    @Test("query --as-of shows history; unknown names list the known ones; parameters are checked")
    func queryOptions() async throws {
        for type in ["A", "B", "A"] { try await append("fitness-x", type) }
        try await append("chat-y", "C")
        let asOf = try await sandbox.esctl(["query", "count-by-type", "--as-of", "2", "--json"])
        #expect(asOf.stdout == #"{"types":{"A":1,"B":1},"total":2}"# + "\n")
        let zero = try await sandbox.esctl(["query", "count-by-type", "--as-of", "0", "--json"])
        #expect(zero.stdout == #"{"types":{},"total":0}"# + "\n")
        let category = try await sandbox.esctl(["query", "stream-summary", "--category", "fitness-", "--json"])
        let streams = try JSONSerialization.jsonObject(with: Data(category.stdout.utf8)) as? [String: [[String: Any]]]
        #expect(streams?["streams"]?.map { $0["stream"] as? String } == ["fitness-x"])
        let unknown = try await sandbox.esctl(["query", "nope"])
        #expect(unknown.status == 67)
        #expect(unknown.stderr.contains("app-state, alerts, messages, campers, campsites, reservations, color, count-by-type, stream-summary"))
        #expect(try await sandbox.esctl(["query", "count-by-type", "--category", "x"]).status == 64)
    }

    @Test("query takes each projection's declared parameters as --NAME VALUE or --NAME=VALUE; anything else exits 64")
    func queryParameters() async throws {
        try await append("stream-a", "A")
        let spaced = try await sandbox.esctl(["query", "app-state", "--user", "ann", "--json"])
        let joined = try await sandbox.esctl(["query", "app-state", "--user=ann", "--json"])
        #expect(spaced.status == 0 && spaced.stdout == joined.stdout)
        #expect(spaced.stdout.hasPrefix(#"{"user":"ann","#))
        let missing = try await sandbox.esctl(["query", "app-state", "--user"])
        #expect(missing.status == 64 && missing.stderr == "esctl: The parameter --user needs a value.\n")
        let twice = try await sandbox.esctl(["query", "app-state", "--user", "a", "--user", "b"])
        #expect(twice.status == 64 && twice.stderr == "esctl: The parameter --user is given twice; give it once.\n")
        let stray = try await sandbox.esctl(["query", "app-state", "ann"])
        #expect(stray.status == 64 && stray.stderr == "esctl: Unexpected argument 'ann'; give the projection's parameters as --NAME VALUE.\n")
        let other = try await sandbox.esctl(["query", "app-state", "--room", "x"])
        #expect(other.status == 64 && other.stderr == "esctl: The projection 'app-state' takes no --room option; it takes --user.\n")
        let none = try await sandbox.esctl(["query", "count-by-type", "--user", "x"])
        #expect(none.status == 64 && none.stderr == "esctl: The projection 'count-by-type' takes no --user option; it takes none.\n")
        // The help lists every projection's parameters from their declarations.
        let help = try await sandbox.esctl(["query", "--help"])
        #expect(help.stdout.contains("reservations --date: only the stays Reserved on this YYYY-MM-DD"))
        #expect(help.stdout.contains("count-by-type: no parameters"))
    }
}

@Suite("esctl --apps: the apps a store is opened with")
struct EsctlAppsTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-apps")
    }

    func names(_ output: ProcessOutput) throws -> [String] {
        try sandbox.objects(output).compactMap { $0["name"] as? String }
    }

    @Test("--apps none registers the log summaries only, --apps LIST the apps named, ESCTL_APPS the same; the default is every app")
    func choosesApps() async throws {
        // Given a store with one event.
        #expect(try await sandbox.esctl(["append", "s-1", "A"]).status == 0)
        // When the projections are listed with each choice.
        let none = try await sandbox.esctl(["projections", "--json", "--apps", "none"])
        let some = try await sandbox.esctl(["projections", "--json", "--apps", " color , chat"])
        let fromEnvironment = try await ProcessRunner.run(
            ProcessRunner.esctl, ["projections", "--json", "--db", sandbox.db], environment: ["ESCTL_APPS": "none"])
        let flagWins = try await ProcessRunner.run(
            ProcessRunner.esctl, ["projections", "--json", "--apps", "color", "--db", sandbox.db], environment: ["ESCTL_APPS": "none"])
        let all = try await sandbox.esctl(["projections", "--json"])
        // Then each lists its apps' read models (in the built-in order) and the log summaries.
        #expect(try names(none) == ["count-by-type", "stream-summary"], "\(none)")
        #expect(try names(some) == ["messages", "color", "count-by-type", "stream-summary"], "\(some)")
        #expect(try names(fromEnvironment) == ["count-by-type", "stream-summary"], "\(fromEnvironment)")
        #expect(try names(flagWins) == ["color", "count-by-type", "stream-summary"], "\(flagWins)")
        #expect(
            try names(all) == ["app-state", "alerts", "messages", "campers", "campsites", "reservations", "color", "count-by-type", "stream-summary"],
            "\(all)")
        // And a read model of an app left out is not known to that store's commands.
        let query = try await sandbox.esctl(["query", "messages", "--apps", "none"])
        #expect(query.status == 67, "\(query)")
        // And switching the choice on one store rebuilds nothing: the log summaries read every
        // type, with every built-in app's upcasters whatever the choice.
        for apps in ["all", "none", "chat", "all"] {
            let counted = try await sandbox.esctl(["query", "count-by-type", "--json", "--apps", apps])
            #expect(counted.status == 0 && counted.stdout == #"{"types":{"A":1},"total":1}"# + "\n", "\(apps): \(counted)")
            #expect(!counted.stderr.contains("rebuilding"), "--apps \(apps) rebuilt: \(counted.stderr)")
        }
    }

    @Test("an app not built in, an empty name, or an app's own command with that app left out: exit 64, nothing written")
    func refusesUnknownApps() async throws {
        // Given a store with one event.
        #expect(try await sandbox.esctl(["append", "s-1", "A"]).status == 0)
        // When an unknown app, an empty name, and an app's command without its app are given.
        let unknown = try await sandbox.esctl(["projections", "--apps", "fitness,bogus"])
        let empty = try await sandbox.esctl(["projections", "--apps", "fitness,,chat"])
        let leftOut = try await sandbox.esctl(["chat", "say", "hi", "--user", "ann", "--apps", "color"])
        let before = try await sandbox.esctl(["--apps", "nope", "stats"])
        let backup = try await sandbox.esctl(["backup", sandbox.directory.appending("copy"), "--apps", "nope"])
        // Then each exits 64 with one sentence.
        #expect(unknown.status == 64, "\(unknown)")
        #expect(unknown.stderr == "esctl: There is no app named 'bogus'; the apps built in are fitness, chat, campground and color, or give all or none.\n")
        #expect(empty.status == 64, "\(empty)")
        #expect(empty.stderr == "esctl: The list of apps 'fitness,,chat' has an empty name; separate names with single commas.\n")
        #expect(leftOut.status == 64, "\(leftOut)")
        #expect(leftOut.stderr == "esctl: The app 'chat' is not among --apps (color); add it, or leave --apps out.\n")
        #expect(before.status == 64, "\(before)")
        #expect(backup.status == 64, "\(backup)")
        // And nothing was written, nor copied.
        #expect(try await sandbox.eventCount() == 1)
        #expect(!FileManager.default.fileExists(atPath: sandbox.directory.appending("copy")))
    }
}

@Suite("esctl app: an app module's commands from the shell")
struct EsctlAppCommandTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-app")
    }

    @Test("a command runs with JSON input and prints what it answers; bad input exits 64 naming the field; an unknown command 67; a refusal by its kind")
    func runsCommands() async throws {
        // When commands run from text and from standard input, then their answers are printed.
        let pressed = try await sandbox.esctl(["app", "color", "set", ##"{"hex":"#006636AA"}"##])
        #expect(pressed.status == 0, "\(pressed)")
        #expect(pressed.stdout.contains(##""hexText":"#006636AA""##), "\(pressed)")
        let said = try await sandbox.esctl(["app", "chat", "say", "-"], stdin: #"{"user":"ann","text":"hi"}"#)
        #expect(said.status == 0, "\(said)")
        #expect(try sandbox.objects(said).map { $0["type"] as? String } == ["MessagePosted"])
        // When the input breaks the declared fields, then 64 with the field named, nothing written.
        let typo = try await sandbox.esctl(["app", "color", "press", #"{"kye":"A"}"#])
        #expect(typo.status == 64, "\(typo)")
        #expect(typo.stderr == "esctl: The field 'kye' is not one esctl app color press takes; its fields are 'calculator', 'key'.\n")
        // When the command is not one of the apps chosen, then 67 with the commands there are.
        let unknown = try await sandbox.esctl(["app", "chat", "shout", #"{"text":"A"}"#, "--apps", "chat"])
        #expect(unknown.status == 67, "\(unknown)")
        #expect(unknown.stderr.hasPrefix("esctl: There is no command 'chat shout' among the apps chosen (chat); the commands are: chat say,"), "\(unknown)")
        let leftOut = try await sandbox.esctl(["app", "color", "press", #"{"key":"A"}"#, "--apps", "chat"])
        #expect(leftOut.status == 67, "\(leftOut)")
        #expect(leftOut.stderr == "esctl: There is no app 'color' with commands among the apps chosen (chat); the apps with commands are: chat.\n", "\(leftOut)")
        // When the app refuses, then its exit code and sentence, with the esctl query that lists what exists.
        let refused = try await sandbox.esctl(["app", "camp", "cancel", #"{"reservation":"nope"}"#])
        #expect(refused.status == 67, "\(refused)")
        #expect(refused.stderr == "esctl: There is no reservation 'nope'; `esctl query reservations` (with the same --campground) lists them.\n")
        // And the listing names every command with its fields.
        let listed = try await sandbox.esctl(["app", "color"])
        #expect(listed.lines == [
            "color press {calculator?: string, key: string}  Presses a key of the hex keypad.",
            "color set {calculator?: string, hex: string}  Sets the display to a hex color.",
        ], "\(listed)")
        #expect(try await sandbox.eventCount() == 2)
        // And an app that is not among those chosen exits 67 with the list; input over 4 MiB 64.
        let noApp = try await sandbox.esctl(["app", "chess"])
        #expect(noApp.status == 67, "\(noApp)")
        #expect(noApp.stderr.hasPrefix("esctl: There is no app 'chess' with commands among the apps chosen (fitness, chat, campground and color); the apps with commands are: alerts, camp, chat, color, fitness."), "\(noApp)")
        let large = try await sandbox.esctl(["app", "chat", "say", "-"], stdin: String(repeating: " ", count: (4 << 20) + 1))
        #expect(large.status == 64, "\(large)")
        #expect(large.stderr == "esctl: The input is over 4 MiB; give less.\n", "\(large)")
        #expect(try await sandbox.eventCount() == 2)
    }

    @Test("listing the commands opens an existing store only; a mistake in the input creates none")
    func createsNothing() async throws {
        let listed = try await sandbox.esctl(["app"])
        #expect(listed.status == 67, "\(listed)")
        let typo = try await sandbox.esctl(["app", "chat", "say", "{"])
        #expect(typo.status == 64, "\(typo)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.db), "a store was created at \(sandbox.db)")
    }
}
