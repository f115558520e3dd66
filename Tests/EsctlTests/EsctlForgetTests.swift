import Foundation
import Testing
import TestSupport

/// `esctl append --personal`, `esctl forget`, and personal data through read, export and import.
@Suite("esctl forget: personal data from the shell")
struct EsctlForgetTests {
    typealias Store = EsctlSandbox.Store

    func withSandbox(_ kind: Store, _ body: (EsctlSandbox) async throws -> Void) async throws {
        try await EsctlSandbox.with(kind, prefix: "esctl-forget", body)
    }

    static let camper = #"{"camperId":"C1","contact":{"fullName":"Ann Smith","phoneNumber":"555-0101"}}"#

    @Test("append --personal, read --json, forget twice, read again: the documented lines, JSON and marker", arguments: Store.allCases)
    func forgetFromTheShell(_ kind: Store) async throws {
        try await withSandbox(kind) { s in
            // Given a camper whose contact is personal, and a note that is personal as a whole
            let appended = try await s.esctl("append", "camp-1", "CamperAdded", "--data", Self.camper, "--personal", "camper:C1=contact")
            #expect(appended.status == 0, "\(appended)")
            #expect(try await s.esctl("append", "note-1", "Note", "--data", #"{"text":"hi"}"#, "--personal", "camper:C1").status == 0)
            // When they are read as JSON, then the data is as appended, with its personal parts
            let read = try await s.esctl("read", "camp-1", "--json")
            #expect(read.stdout.contains(#""data":{"camperId":"C1","contact":{"fullName":"Ann Smith","phoneNumber":"555-0101"}}"#), "\(read)")
            #expect(read.stdout.contains(#""personal":[{"subject":"camper:C1","fields":["contact"]}]"#), "\(read)")
            // When the camper is forgotten
            let forgotten = try await s.esctl("forget", "camper:C1", "--json")
            #expect(forgotten.status == 0, "\(forgotten)")
            let object = try #require(try s.objects(forgotten).first)
            #expect(object["subject"] as? String == "camper:C1" && object["alreadyForgotten"] as? Bool == false)
            #expect(object["requestPosition"] as? Int == 3 && object["forgottenPosition"] as? Int == 4)
            #expect((object["key"] as? String)?.count == 32)
            // Then forgetting again writes nothing and says so
            let again = try await s.esctl("forget", "camper:C1")
            #expect(again.lines == ["camper:C1: forgotten already; nothing written"], "\(again)")
            let unknown = try await s.esctl("forget", "camper:C9", "--json")
            #expect(unknown.lines == [#"{"subject":"camper:C9","key":null,"requestPosition":null,"forgottenPosition":null,"alreadyForgotten":true,"known":false}"#], "\(unknown)")
            // And every read shows the marker, the part marked forgotten
            let after = try await s.esctl("read", "camp-1", "--json")
            #expect(after.stdout.contains(#""data":{"camperId":"C1","contact":{"$forgotten":"camper:C1"}}"#), "\(after)")
            #expect(after.stdout.contains(#""personal":[{"subject":"camper:C1","fields":["contact"],"forgotten":true}]"#), "\(after)")
            #expect(try await s.esctl("read", "note-1").stdout.contains(#"{"$forgotten":"camper:C1"}"#))
            let exported = try await s.esctl("export")
            #expect(!exported.stdout.contains("Ann Smith") && !exported.stdout.contains("555-0101"), "\(exported)")
            #expect(try await s.esctl("verify").status == 0)
        }
    }

    @Test("an export carries personal data decrypted with its marks, and the copy seals it again; forgotten parts stay forgotten")
    func exportImport() async throws {
        let source = try EsctlSandbox(prefix: "esctl-forget-source")
        // Given a store with two campers' personal data, one of them forgotten
        #expect(try await source.esctl("append", "camp-1", "CamperAdded", "--data", Self.camper, "--personal", "camper:C1=contact").status == 0)
        let bob = #"{"camperId":"C2","contact":{"fullName":"Bob Jones","phoneNumber":"555-0202"}}"#
        #expect(try await source.esctl("append", "camp-1", "CamperAdded", "--data", bob, "--personal", "camper:C2=contact").status == 0)
        #expect(try await source.esctl("forget", "camper:C1").status == 0)
        // And a later contact of C1, under a new key, that the source still reads
        let later = #"{"camperId":"C1","contact":{"fullName":"Ann Again","phoneNumber":"555-0303"}}"#
        #expect(try await source.esctl("append", "camp-1", "CamperAdded", "--data", later, "--personal", "camper:C1=contact").status == 0)
        let exported = try await source.esctl("export")
        // When its export is imported into an empty store
        let copy = try EsctlSandbox(prefix: "esctl-forget-copy")
        let imported = try await copy.esctl(["import", "-", "--json"], stdin: exported.stdout)
        #expect(imported.status == 0, "\(imported)")
        let summary = try #require(try copy.objects(imported).first)
        #expect(summary["imported"] as? Int == 3 && summary["forgetRecordsPassedOver"] as? Int == 1 && summary["subjectsForgotten"] == nil)
        // Then the copy reads bob's contact and ann's later one, her first as forgotten, and exports the same events
        let read = try await copy.esctl("read", "camp-1", "--json")
        #expect(read.stdout.contains("Bob Jones") && !read.stdout.contains("Ann Smith") && read.stdout.contains("Ann Again"), "\(read)")
        #expect(read.stdout.contains(#""contact":{"$forgotten":"camper:C1"}"#), "\(read)")
        let again = try await copy.esctl("export")
        #expect(again.lines == exported.lines.filter { $0.contains("CamperAdded") }.map { $0.replacingOccurrences(of: #""position":5"#, with: #""position":3"#) }, "\(again)")
        // And importing the same export again changes nothing: ann's later contact stays readable
        let reimported = try await copy.esctl(["import", "-", "--json"], stdin: exported.stdout)
        #expect(reimported.status == 0, "\(reimported)")
        #expect(try await copy.esctl("read", "camp-1").stdout.contains("Ann Again"))
        // And the copy's own forget of bob works on the key the import made
        #expect(try await copy.esctl("forget", "camper:C2").status == 0)
        #expect(!(try await copy.esctl("read", "camp-1").stdout.contains("Bob Jones")))
    }

    @Test("a backup restored from before a forget, given the log since, forgets again")
    func restoredBackupForgetsAgain() async throws {
        let live = try EsctlSandbox(prefix: "esctl-forget-live")
        // Given a backup taken while a camper's contact was readable
        #expect(try await live.esctl("append", "camp-1", "CamperAdded", "--data", Self.camper, "--personal", "camper:C1=contact").status == 0)
        let backup = live.directory.appending("backup")
        #expect(try await live.esctl("backup", backup).status == 0)
        // And the live store that went on, and forgot the camper
        #expect(try await live.esctl("append", "camp-1", "Noted").status == 0)
        #expect(try await live.esctl("forget", "camper:C1").status == 0)
        // When the backup is restored and given the log since its head (position 1)
        let since = try await live.esctl("export", "--from", "2")
        #expect(try await ProcessRunner.esctl(["read", "camp-1"], db: backup).stdout.contains("Ann Smith"), "the backup holds the contact")
        let imported = try await ProcessRunner.esctl(["import", "-", "--json"], db: backup, stdin: Data(since.stdout.utf8))
        #expect(imported.status == 0, "\(imported)")
        // Then the restored store has forgotten the camper again
        let read = try await ProcessRunner.esctl(["read", "camp-1"], db: backup)
        #expect(!read.stdout.contains("Ann Smith") && read.stdout.contains(#"{"$forgotten":"camper:C1"}"#), "\(read)")
    }

    @Test("bad --personal marks and a forget of a bad subject are refused with exit 64 and one sentence")
    func refusals() async throws {
        let s = try EsctlSandbox(prefix: "esctl-forget-bad")
        let missing = try await s.esctl("append", "camp-1", "CamperAdded", "--data", Self.camper, "--personal", "camper:C1=email")
        #expect(missing.status == 64 && missing.stderr.contains("'email'"), "\(missing)")
        let empty = try await s.esctl("append", "camp-1", "CamperAdded", "--data", Self.camper, "--personal", "camper:C1=")
        #expect(empty.status == 64, "\(empty)")
        let system = try await s.esctl("append", "$forgotten", "X")
        #expect(system.status == 64 && system.stderr.contains("belongs to the store"), "\(system)")
        #expect(try await s.esctl("forget", "").status != 0)
    }
}
