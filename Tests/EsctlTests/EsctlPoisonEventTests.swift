import Foundation
import Testing
import TestSupport

/// An event appended by hand that an app cannot decode must not stop its read model for every
/// user, nor its commands: it is passed over, reported, and part of the state's hash.
@Suite("esctl with a poison event")
struct EsctlPoisonEventTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-poison")
    }

    func esctl(_ arguments: String...) async throws -> ProcessOutput {
        try await sandbox.esctl(arguments)
    }

    @Test("a PedometerUpdated with bad data: queries answer for every user, the command warns and decides, projections lists it")
    func poisonPedometer() async throws {
        // Given a workout for zed and ann, and a hand-appended event zed's app cannot decode
        #expect(try await esctl("fitness", "goal", "400", "--user", "zed").status == 0)
        #expect(try await esctl("fitness", "goal", "50", "--user", "ann").status == 0)
        let poison = try await esctl("append", "fitness-zed", "PedometerUpdated", "--data", #"{"steps":"lots"}"#)
        #expect(poison.lines == ["position 3, stream fitness-zed at version 2"])
        // When zed starts the workout: it decides by its rules, warning about the event it passed over
        let start = try await esctl("fitness", "start", "--user", "zed")
        #expect(start.status == 0)
        #expect(start.lines == ["zed: inProgress (button: Pause); goal 400, steps 0, distance 0 m, Nessie 0 m"])
        #expect(start.stderr.hasPrefix("esctl: warning: passed over position 3 (PedometerUpdated, version 2 of 'fitness-zed'): its data is not a PedometerUpdated"))
        // Then queries answer for both users
        let zed = try await esctl("query", "app-state", "--user", "zed", "--json")
        #expect(zed.status == 0)
        #expect(zed.stdout.hasPrefix(#"{"user":"zed","state":"inProgress","label":"Pause","goal":400,"steps":0,"#))
        #expect(try await esctl("query", "app-state", "--user", "ann", "--json").status == 0)
        // And projections lists the passed-over event with its reason, by the documented keys
        let listed = try sandbox.objects(try await esctl("projections", "--json"))
        let appState = try #require(listed.first { $0["name"] as? String == "app-state" })
        #expect(appState["eventsSkipped"] as? Int == 1)
        let skipped = try #require(appState["skippedPositions"] as? [[String: Any]])
        #expect(skipped.map { $0["position"] as? Int } == [3])
        #expect((skipped.first?["reason"] as? String)?.contains("\"steps\" is missing or not a whole number in range") == true)
        #expect(listed.filter { $0["name"] as? String != "app-state" }.allSatisfy { $0["eventsSkipped"] as? Int == 0 })
        // And the state hash covers it: a rebuild gives the same hash, and verify --deep agrees
        let hash = appState["hash"] as? String
        let rebuilt = try sandbox.objects(try await esctl("rebuild", "app-state", "--json"))
        #expect(rebuilt.first?["hash"] as? String == hash)
        #expect(rebuilt.first?["eventsSkipped"] as? Int == 1)
        #expect(try await esctl("verify", "--deep").status == 0)
    }

    @Test("projections skip: refused for a projection that passes over by itself, for an applied event and for no event")
    func skipRefusals() async throws {
        #expect(try await esctl("fitness", "goal", "400", "--user", "zed").status == 0)
        #expect(try await esctl("query", "count-by-type").status == 0)
        let skipping = try await esctl("projections", "skip", "app-state", "--position", "1")
        #expect(skipping.status == 64)
        #expect(skipping.stderr == "esctl: The projection 'app-state' passes over the events it cannot apply by itself (its error policy is skip); nothing to decide.\n")
        let applied = try await esctl("projections", "skip", "count-by-type", "--position", "1")
        #expect(applied.status == 64)
        #expect(applied.stderr.contains("has applied position 1 already"))
        let none = try await esctl("projections", "skip", "count-by-type", "--position", "7")
        #expect(none.status == 64)
        #expect(none.stderr == "esctl: There is no event at position 7 (the head is 1).\n")
        #expect(try await esctl("projections", "skip", "nope", "--position", "1").status == 67)
        #expect(try await sandbox.eventCount() == 1)
    }

    @Test("projections skip records the decision and the projection resumes past it; rebuild and export carry it")
    func skipDecision() async throws {
        // Given events count-by-type has not reached
        #expect(try await esctl("fitness", "goal", "400", "--user", "zed").status == 0)
        #expect(try await esctl("append", "misc", "Odd").status == 0)
        // When an operator passes over position 2 in count-by-type
        let skip = try await esctl("projections", "skip", "count-by-type", "--position", "2", "--reason", "not ours", "--json")
        #expect(skip.status == 0)
        #expect(skip.stdout == #"{"projection":"count-by-type","position":2,"decision":3,"checkpoint":3}"# + "\n")
        // Then the decision is an event of the store's own stream, and the count passes over the event
        let decision = try sandbox.objects(try await esctl("read", "$projections", "--json"))
        #expect(decision.map { $0["type"] as? String } == ["EventPassedOver"])
        let counts = try await esctl("query", "count-by-type", "--json")
        #expect(counts.stdout == #"{"types":{"EventPassedOver":1,"GoalSet":1},"total":2}"# + "\n")
        // And a rebuild makes the same choice
        let before = try sandbox.objects(try await esctl("projections", "--json")).first { $0["name"] as? String == "count-by-type" }
        let rebuilt = try sandbox.objects(try await esctl("rebuild", "count-by-type", "--json"))
        #expect(rebuilt.first?["hash"] as? String == before?["hash"] as? String)
        #expect(rebuilt.first?["eventsSkipped"] as? Int == 1)
        // And an export carries it, so a copy of the log makes the same choice
        let exported = try sandbox.objects(try await esctl("export"))
        #expect(exported.map { $0["stream"] as? String } == ["fitness-zed", "misc", "$projections"])
        // And a copy imported from it holds the decision and makes the same choice
        let export = try await esctl("export")
        let copy = sandbox.directory.appending("copy")
        #expect(try await ProcessRunner.esctl(["import", "-"], db: copy, stdin: Data(export.stdout.utf8)).status == 0)
        #expect(try await ProcessRunner.esctl(["export"], db: copy).stdout == export.stdout)
        let copied = try sandbox.objects(try await ProcessRunner.esctl(["rebuild", "count-by-type", "--json"], db: copy))
        #expect(copied.first?["eventsSkipped"] as? Int == 1)
        // But an append by hand to the store's own stream is refused, and nothing is written
        let forged = try await esctl("append", "$projections", "EventPassedOver", "--data", #"{"projection":"count-by-type"}"#)
        #expect(forged.status == 64 && forged.stderr.contains("belongs to the store"), "\(forged)")
        #expect(try sandbox.objects(try await esctl("read", "$projections", "--json")).count == 1)
    }

    @Test("steps of Int.max appended twice by hand: sums saturate, every query and the rebuild answer")
    func hugeSteps() async throws {
        #expect(try await esctl("fitness", "goal", "400", "--user", "p").status == 0)
        #expect(try await esctl("fitness", "start", "--user", "p").status == 0)
        for _ in 0..<2 {
            let appended = try await esctl("append", "fitness-p", "PedometerUpdated", "--data", #"{"steps":9223372036854775807,"distance":1}"#)
            #expect(appended.status == 0)
        }
        let state = try await esctl("query", "app-state", "--user", "p", "--json")
        #expect(state.status == 0, "\(state)")
        #expect(state.stdout.contains(#""steps":9223372036854775807"#))
        #expect(try await esctl("query", "app-state", "--user", "q").status == 0)
        #expect(try await esctl("rebuild", "--all").status == 0)
        // And the command on that stream decides on the saturated state
        let walk = try await esctl("fitness", "walk", "--steps", "1", "--user", "p")
        #expect(walk.status == 1 || walk.status == 0, "\(walk)")
        #expect(try await esctl("verify", "--deep").status == 0)
    }

    @Test("a goal of Int.max is refused with the range; texts over the limits are refused with theirs")
    func boundedInput() async throws {
        let goal = try await esctl("fitness", "goal", "9223372036854775807", "--user", "g")
        #expect(goal.status == 64 && goal.stderr == "esctl: The goal must be a positive number of steps, at most 10000000.\n")
        let long = String(repeating: "é", count: 4_001)
        let said = try await esctl("chat", "say", long, "--user", "ann")
        #expect(said.status == 64 && said.stderr == "esctl: The message is 4001 characters long; the limit is 4000.\n")
        let name = try await esctl("camp", "add-camper", String(repeating: "n", count: 100_000), "555")
        #expect(name.status == 64 && name.stderr == "esctl: The camper's full name is 100000 characters long; the limit is 200.\n")
        let posted = try await esctl("alerts", "post", long)
        #expect(posted.status == 64 && posted.stderr == "esctl: The alert text is 4001 characters long; the limit is 4000.\n")
        let stay = try await esctl("camp", "reserve", "--site", "1", "--camper", "C1", "--date", "9999-12-31", "--nights", "2")
        #expect(stay.status == 64)
        #expect(stay.stderr == "esctl: A stay from 9999-12-31 for 2 nights ends on 10000-01-02, outside the years 1 to 9999; give dates within them.\n")
        #expect(try await sandbox.eventCount() == 0)
    }
}
