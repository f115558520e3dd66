import Foundation
import Testing
import TestSupport

@Suite("esctl fitness, alerts, chat and camp")
struct EsctlDomainTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-domains")
    }

    func esctl(_ arguments: String...) async throws -> ProcessOutput {
        try await sandbox.esctl(arguments)
    }

    func query(_ arguments: String...) async throws -> [String: Any] {
        let output = try await sandbox.esctl(["query"] + arguments + ["--json"])
        #expect(output.status == 0, "\(output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
    }

    @Test("a workout: refusals exit 1 and record nothing; data posts alerts; app-state and alerts show it")
    func workout() async throws {
        let refused = try await esctl("fitness", "start", "--user", "ann")
        #expect(refused.status == 1)
        #expect(refused.stderr == "esctl: Set a goal to start.\n")
        #expect(try await sandbox.eventCount() == 0)
        #expect(try await esctl("fitness", "goal", "400", "--user", "ann").status == 0)
        #expect(try await esctl("fitness", "start", "--user", "ann").status == 0)
        let walk = try await esctl("fitness", "walk", "--steps", "100", "--distance", "80", "--user", "ann", "--json")
        #expect(walk.status == 0)
        #expect(try sandbox.objects(walk).map { $0["type"] as? String } == ["PedometerUpdated", "AlertTriggered", "AlertPosted"])
        let text = try await esctl("fitness", "walk", "--steps", "1", "--user", "ann")
        #expect(text.lines == ["ann: inProgress (button: Pause); goal 400, steps 101, distance 80 m, Nessie 0 m"])
        #expect(try await esctl("fitness", "goal", "5", "--user", "ann").status == 1)
        #expect(try await esctl("fitness", "walk", "--steps", "-3", "--user", "ann").status == 64)

        let state = try await query("app-state", "--user", "ann")
        #expect(state["user"] as? String == "ann" && state["state"] as? String == "inProgress" && state["label"] as? String == "Pause")
        #expect(state["goal"] as? Int == 400 && state["steps"] as? Int == 101 && state["distance"] as? Double == 80 && state["nessie"] as? Double == 0)
        let fresh = try await query("app-state", "--user", "nobody")
        #expect(fresh["state"] as? String == "notStarted" && fresh["goal"] is NSNull)

        let alerts = try await query("alerts", "--user", "ann")
        #expect(alerts["count"] as? Int == 1)
        #expect((alerts["top"] as? [String: Any])?["name"] as? String == "milestone25Percent")
        #expect(alerts["nextUp"] is NSNull)
        #expect((alerts["alerts"] as? [[String: Any]])?.map { $0["severity"] as? String } == ["good"])
    }

    @Test("alerts: post once, clear by name or text or all; clearing what is not queued exits 67")
    func alerts() async throws {
        #expect(try await esctl("alerts", "post", "Drink water", "--severity", "bad").stdout == "posted (bad): Drink water; 1 alert(s) queued\n")
        #expect(try await esctl("alerts", "post", "Drink water").stdout == "already queued, nothing recorded: Drink water\n")
        #expect(try await sandbox.eventCount() == 1)
        #expect(try await esctl("alerts", "post", "Stretch").status == 0)
        let queue = try await query("alerts")
        #expect((queue["alerts"] as? [[String: Any]])?.map { $0["name"] is NSNull } == [true, true])
        #expect(try await esctl("alerts", "clear", "Drink water").status == 0)
        #expect(try await esctl("alerts", "clear", "Drink water").status == 67)
        #expect(try await esctl("alerts", "clear", "--all").stdout == "cleared 1 alert(s)\n")
        #expect(try await esctl("alerts", "clear", "--all").stdout == "the queue was empty; nothing recorded\n")
        #expect(try await esctl("alerts", "post", "").status == 64)
        #expect(try await esctl("alerts", "clear").status == 64)
        #expect(try await query("alerts")["count"] as? Int == 0)
    }

    @Test("chat: say, location, presence and a countdown; the room shows them with dates, ids and activity")
    func chat() async throws {
        #expect(try await esctl("chat", "connect", "--user", "ann", "--room", "main").status == 0)
        let said = try await esctl("chat", "say", "hello", "--user", "ann", "--room", "main")
        #expect(said.lines.count == 1 && said.lines[0].hasSuffix("  ann: hello"))
        let countdown = try await esctl("chat", "countdown", "Tada!", "--user", "ann", "--room", "main", "--interval", "0")
        #expect(countdown.status == 0)
        #expect(countdown.lines.map { $0.components(separatedBy: "  ").last ?? "" } == ["ann: 3...", "ann: 2...", "ann: 1...", "ann: 🎉 Tada!"])
        #expect(try await esctl("chat", "location", "Loch Ness", "--user", "bob", "--room", "main").status == 0)
        #expect(try await esctl("chat", "say", "", "--user", "ann").status == 64)
        #expect(try await esctl("chat", "countdown", " ", "--user", "ann").status == 64)
        #expect(try await esctl("chat", "say", "hi").status == 64)

        let room = try await query("messages", "--room", "main")
        #expect(room["room"] as? String == "main")
        #expect(room["activeUsers"] as? Int == 2)
        let messages = try #require(room["messages"] as? [[String: Any]])
        #expect(messages.map { $0["text"] as? String } == ["ann connected", "hello", "3...", "2...", "1...", "🎉 Tada!", "📍 Loch Ness"])
        #expect(messages.first?["user"] is NSNull)
        #expect(messages.allSatisfy { ($0["id"] as? String)?.count == 36 && ($0["date"] as? String)?.hasSuffix("Z") == true })
        #expect((room["newReader"] as? [[String: Any]])?.map { $0["text"] as? String } == ["1...", "🎉 Tada!", "📍 Loch Ness"])
    }

    @Test("camp: a camper recorded in CamperAdded's version 1 shape answers in version 2's through read, replay, subscribe, query and commands; --as-stored and export keep it as stored")
    func camperEvolution() async throws {
        // Given a camper added by the app (version 2), then one appended in version 1's shape, as
        // stores written before CamperAdded evolved hold it
        #expect(try await esctl("camp", "add-camper", "Johnny Appleseed", "408-555-1234").stdout == "C1\n")
        let stream = try #require(try sandbox.objects(try await esctl("replay", "--json")).first?["stream"] as? String)
        let v1 = #"{"camperId":"C2","fullName":"Bacon Lover","phoneNumber":"910-543-9000"}"#
        // (with the campground's tags, which reservations find campers by)
        #expect(try await esctl("append", stream, "CamperAdded", "--data", v1, "--tag", "campground:default", "--tag", "camper:C2").status == 0)
        let upcast = [
            #"{"camperId":"C1","contact":{"fullName":"Johnny Appleseed","phoneNumber":"408-555-1234"}}"#,
            #"{"camperId":"C2","contact":{"fullName":"Bacon Lover","phoneNumber":"910-543-9000"}}"#,
        ]
        func shown(_ output: ProcessOutput) throws -> [String] {
            try sandbox.objects(output).map { object in
                let data = try JSONSerialization.data(withJSONObject: object["data"] ?? [:], options: [.sortedKeys])
                return "\(object["schemaVersion"] as? Int ?? 1) \(String(decoding: data, as: UTF8.self))"
            }
        }
        func sorted(_ json: String) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: Data(json.utf8)), options: [.sortedKeys]), as: UTF8.self)
        }
        let expected = ["2 \(try sorted(upcast[0]))", "1 \(try sorted(upcast[1]))"]
        // When they are read through esctl, then both have version 2's shape, each with its recorded version
        #expect(try shown(try await esctl("read", stream, "--json")) == expected, "read")
        #expect(try shown(try await esctl("replay", "--json")) == expected, "replay")
        #expect(try shown(try await esctl("subscribe", "--from-start", "--json", "--count", "2", "--timeout", "30")) == expected, "subscribe")
        // And as stored, the second is version 1's shape
        let stored = ["2 \(try sorted(upcast[0]))", "1 \(try sorted(v1))"]
        #expect(try shown(try await esctl("read", stream, "--json", "--as-stored")) == stored, "read --as-stored")
        #expect(try shown(try await esctl("replay", "--json", "--as-stored")) == stored, "replay --as-stored")
        #expect(try shown(try await esctl("subscribe", "--from-start", "--json", "--count", "2", "--timeout", "30", "--as-stored")) == stored, "subscribe --as-stored")
        // And the read model and the commands know both campers
        #expect(try await esctl("query", "campers", "--json").stdout == #"[{"id":"C1","fullName":"Johnny Appleseed","phoneNumber":"408-555-1234"},{"id":"C2","fullName":"Bacon Lover","phoneNumber":"910-543-9000"}]"# + "\n")
        #expect(try await esctl("camp", "add-camper", "Third", "1").stdout == "C3\n")
        #expect(try await esctl("camp", "add-site", "15").status == 0)
        #expect(try await esctl("camp", "reserve", "--site", "15", "--camper", "C2", "--date", "2026-07-01", "--nights", "1").stdout == "R1 Reserved\n")
        // And export writes what is stored; a copy imported from it exports the same and reads upcast
        let exported = try await esctl("export")
        #expect(try shown(exported).prefix(2) == stored.prefix(2))
        let copy = sandbox.directory.appending("copy")
        #expect(try await ProcessRunner.esctl(["import", "-"], db: copy, stdin: Data(exported.stdout.utf8)).status == 0)
        #expect(try await ProcessRunner.esctl(["export"], db: copy).stdout == exported.stdout)
        #expect(try shown(try await ProcessRunner.esctl(["read", stream, "--json", "--limit", "2"], db: copy)) == expected)
    }

    @Test("camp: campers, sites, reservations with recorded rejections, listed by camper, site and date")
    func camp() async throws {
        #expect(try await esctl("camp", "add-camper", "Johnny Appleseed", "408-555-1234").stdout == "C1\n")
        #expect(try await esctl("camp", "add-camper", "Bacon Lover", "910-543-9000").stdout == "C2\n")
        for number in ["1", "10", "30", "31"] { #expect(try await esctl("camp", "add-site", number).status == 0) }
        #expect(try await esctl("camp", "add-site", "15", "--electricity", "--water").status == 0)
        let duplicate = try await esctl("camp", "add-site", "15")
        #expect(duplicate.status == 1 && duplicate.stderr.contains("Site 15 already exists"))
        #expect(try await esctl("camp", "reserve", "--site", "15", "--camper", "C1", "--date", "2026-07-01", "--nights", "3").stdout == "R1 Reserved\n")
        let invalid = try await esctl("camp", "reserve", "--site", "15", "--camper", "C2", "--date", "2026-07-01", "--nights", "-1")
        #expect(invalid.status == 1)
        #expect(invalid.stdout == "R2 Invalid\n")
        #expect(invalid.stderr == "esctl: Invalid number of days (reservation R2 recorded as Invalid; CampingManager error 5).\n")
        let overlap = try await esctl("camp", "reserve", "--site", "15", "--camper", "C2", "--date", "2026-07-03", "--nights", "2")
        #expect(overlap.status == 1 && overlap.stdout == "R3 Invalid\n")
        let before = try await sandbox.eventCount()
        #expect(try await esctl("camp", "reserve", "--site", "99", "--camper", "C1", "--date", "2026-07-01", "--nights", "1").status == 67)
        #expect(try await esctl("camp", "reserve", "--site", "15", "--camper", "C9", "--date", "2026-07-01", "--nights", "1").status == 67)
        #expect(try await esctl("camp", "reserve", "--site", "15", "--camper", "C1", "--date", "2026-02-30", "--nights", "1").status == 64)
        #expect(try await esctl("camp", "delete-site", "15").status == 1)
        #expect(try await sandbox.eventCount() == before)
        #expect(try await esctl("camp", "reserve", "--site", "30", "--camper", "C2", "--date", "2026-07-02", "--nights", "1").stdout == "R4 Reserved\n")
        #expect(try await esctl("camp", "cancel", "R4").stdout == "R4 Cancelled\n")
        #expect(try await esctl("camp", "cancel", "R4").status == 1)

        let campers = try await sandbox.esctl(["query", "campers", "--json"])
        #expect(campers.stdout == #"[{"id":"C1","fullName":"Johnny Appleseed","phoneNumber":"408-555-1234"},{"id":"C2","fullName":"Bacon Lover","phoneNumber":"910-543-9000"}]"# + "\n")
        let sites = try await query("campsites")
        #expect(sites["nextSiteNumber"] as? Int == 32)
        #expect((sites["sites"] as? [[String: Any]])?.map { $0["number"] as? Int } == [1, 10, 15, 30, 31])
        func reservations(_ filter: String...) async throws -> [String] {
            let output = try await sandbox.esctl(["query", "reservations", "--json"] + filter)
            let list = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]]
            return (list ?? []).map { "\($0["id"] ?? "?") \($0["status"] ?? "?") \($0["problem"] is NSNull ? "-" : "\($0["problem"] ?? "")")" }
        }
        #expect(try await reservations() == ["R1 Reserved -", "R2 Invalid Invalid number of days", "R3 Invalid Site already reserved for those dates", "R4 Cancelled -"])
        #expect(try await reservations("--camper", "C2") == ["R2 Invalid Invalid number of days", "R3 Invalid Site already reserved for those dates", "R4 Cancelled -"])
        #expect(try await reservations("--site", "15").count == 3)
        #expect(try await reservations("--date", "2026-07-02") == ["R1 Reserved -"])
        let keys = try await sandbox.esctl(["query", "reservations", "--json", "--camper", "C1"])
        #expect(keys.stdout == #"[{"id":"R1","camper":"C1","site":15,"dateFrom":"2026-07-01","dateTo":"2026-07-04","status":"Reserved","problem":null}]"# + "\n")
        #expect(try await sandbox.esctl(["query", "campsites", "--user", "ann"]).status == 64)
    }
}
