import Foundation
import Testing
import TestSupport

/// `esctl append --tag` and `--condition`, `replay --tag` and `--query`, and tags through export and import.
@Suite("esctl tags and conditions: appends that fail when a matching event was recorded since")
struct EsctlTagsTests {
    typealias Store = EsctlSandbox.Store

    func withSandbox(_ kind: Store, _ body: (EsctlSandbox) async throws -> Void) async throws {
        try await EsctlSandbox.with(kind, prefix: "esctl-tags", body)
    }

    @Test("append --tag and a batch with tags; replay --tag and --query; --json shows tags; a condition refuses with 65 naming the position", arguments: Store.allCases)
    func tagsFromTheShell(_ kind: Store) async throws {
        try await withSandbox(kind) { s in
            // Given a site added with tags, and a batch of a camper and a note
            #expect(try await s.esctl("append", "camp", "SiteAdded", "--data", #"{"number":15}"#, "--tag", "site:15").status == 0)
            let batch = """
                {"stream":"camp","type":"CamperAdded","data":{"camperId":"C1"},"tags":["camper:C1"]}
                {"stream":"notes","type":"Note","tags":["site:15","camper:C1"]}
                """
            let appended = try await s.esctl(["append", "--batch", "-"], stdin: batch)
            #expect(appended.status == 0, "\(appended)")
            // When events are read by tag, then exactly the tagged ones come, with "tags" in their JSON
            let site = try await s.esctl("replay", "--tag", "site:15", "--json")
            #expect(try s.objects(site).map { $0["position"] as? Int } == [1, 3], "\(site)")
            #expect(site.lines.first?.contains(#""tags":["site:15"]"#) == true, "\(site)")
            #expect(try await s.esctl("replay", "--tag", "site:15", "--tag", "camper:C1").lines.count == 1)
            #expect(try await s.esctl("replay", "--tag", "site:15", "--type", "Note").lines.count == 1)
            let query = try await s.esctl("replay", "--query", #"[{"types":["SiteAdded"]},{"tags":["camper:C1"],"types":["CamperAdded"]}]"#, "--json")
            #expect(try s.objects(query).map { $0["position"] as? Int } == [1, 2], "\(query)")
            // And an event without tags has no "tags" key
            #expect(try await s.esctl("append", "other", "Plain").status == 0)
            #expect(try await s.esctl("read", "other", "--json").stdout.contains("\"tags\"") == false)

            // When a reservation is appended on the condition that nothing tagged site:15 was recorded after 3
            let condition = #"{"failIfEventsMatch":[{"types":["Reserved"],"tags":["site:15"]}],"after":3}"#
            let first = try await s.esctl(["append", "--batch", "-", "--condition", condition, "--json"],
                stdin: #"{"stream":"camp","type":"Reserved","tags":["site:15"],"id":"00000000-0000-0000-0000-0000000000a1"}"#)
            #expect(first.status == 0 && first.stdout.contains(#""position":5"#), "\(first)")
            // Then a second one on the same condition is refused with 65, naming position 5, and writes nothing
            let second = try await s.esctl(["append", "--batch", "-", "--condition", condition],
                stdin: #"{"stream":"camp","type":"Reserved","tags":["site:15"]}"#)
            #expect(second.status == 65, "\(second)")
            #expect(second.stderr.contains("the event at position 5 matches item 1 of its query"), "\(second)")
            #expect(try await s.eventCount() == 5)
            // And a retry of the first with its id prints the original position
            let retry = try await s.esctl(["append", "--batch", "-", "--condition", condition],
                stdin: #"{"stream":"camp","type":"Reserved","tags":["site:15"],"id":"00000000-0000-0000-0000-0000000000a1"}"#)
            #expect(retry.lines == ["position 5, stream camp at version 3 (already recorded; nothing written)"], "\(retry)")
            // And a single append takes --condition too; without "after" it checks the whole log
            let unique = try await s.esctl("append", "camp", "SiteAdded", "--tag", "site:15", "--condition", #"{"failIfEventsMatch":{"types":["SiteAdded"],"tags":["site:15"]}}"#)
            #expect(unique.status == 65 && unique.stderr.contains("position 1"), "\(unique)")
        }
    }

    @Test("bad tags, queries and conditions are refused with 64 and a sentence, and write nothing", arguments: Store.allCases)
    func refusals(_ kind: Store) async throws {
        try await withSandbox(kind) { s in
            let cases: [([String], String?, String)] = [
                (["append", "s", "T", "--tag", ""], nil, "The tag name is empty"),
                (["append", "s", "T", "--tag", "a", "--tag", "a"], nil, "the same tag twice"),
                (["append", "--batch", "-"], #"{"stream":"s","type":"T","tags":"x"}"#, "Line 1 is not a valid event: \"tags\" must be a list of strings"),
                (["append", "--batch", "-", "--condition", "{}"], #"{"stream":"s","type":"T"}"#, "no \"failIfEventsMatch\""),
                (["append", "--batch", "-", "--condition", #"{"failIfEventsMatch":[]}"#], #"{"stream":"s","type":"T"}"#, "The query has no items"),
                (["append", "--batch", "-", "--condition", #"{"failIfEventsMatch":[{"tag":["x"]}]}"#], #"{"stream":"s","type":"T"}"#, "unknown key \"tag\""),
                (["append", "--batch", "-", "--condition", #"{"failIfEventsMatch":[{}],"after":-1}"#], #"{"stream":"s","type":"T"}"#, "\"after\" is not a position"),
                (["replay", "--query", "nope"], nil, "The query is not JSON"),
                (["replay", "--query", "[]", "--tag", "x"], nil, "give --type and --tag inside it"),
            ]
            for (arguments, stdin, message) in cases {
                let output = try await s.esctl(arguments, stdin: stdin)
                #expect(output.status == 64, "\(arguments): \(output)")
                #expect(output.stderr.contains(message), "\(arguments): \(output.stderr)")
            }
            #expect(try await s.eventCount() == 0)
        }
    }

    @Test("export and import keep tags: the copy answers the same queries", arguments: Store.allCases)
    func exportImport(_ kind: Store) async throws {
        try await withSandbox(kind) { s in
            // Given tagged events exported
            #expect(try await s.esctl("append", "camp", "SiteAdded", "--tag", "site:15", "--tag", "campground:default").status == 0)
            #expect(try await s.esctl("append", "camp", "SiteAdded", "--tag", "site:16").status == 0)
            let exported = try await s.esctl("export")
            #expect(exported.stdout.contains(#""tags":["site:15","campground:default"]"#), "\(exported)")
            // When they are imported into another store
            let copy = s.directory.appending("copy")
            #expect(try await ProcessRunner.esctl(["import", "-"], db: copy, stdin: Data(exported.stdout.utf8)).status == 0)
            // Then the copy exports the same and answers a query by tag
            #expect(try await ProcessRunner.esctl(["export"], db: copy).stdout == exported.stdout)
            #expect(try await ProcessRunner.esctl(["replay", "--tag", "site:16"], db: copy).lines.count == 1)
        }
    }
}
