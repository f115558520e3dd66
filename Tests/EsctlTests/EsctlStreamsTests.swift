import Foundation
import Testing
import TestSupport

/// `esctl streams delete|retention|show` and `esctl purge`, on a store directory and on PostgreSQL.
@Suite("esctl streams and purge: deletion and retention from the shell")
struct EsctlStreamsTests {
    typealias Store = EsctlSandbox.Store

    func withSandbox(_ kind: Store, _ body: (EsctlSandbox) async throws -> Void) async throws {
        try await EsctlSandbox.with(kind, prefix: "esctl-streams", body)
    }

    @Test("delete, show, a deleted id appended again, a tombstone: the documented lines, JSON and exit codes", arguments: Store.allCases)
    func deleteAndShow(_ kind: Store) async throws {
        try await withSandbox(kind) { s in
            // Given a stream of two events, one with an id, and another stream
            let id = "6f1c1a52-8a2b-4c3d-9e4f-0a1b2c3d4e5f"
            #expect(try await s.esctl("append", "orders-1", "Placed", "--id", id).status == 0)
            #expect(try await s.esctl("append", "orders-1", "Shipped").status == 0)
            #expect(try await s.esctl("append", "keep-1", "Kept").status == 0)
            // When it is deleted with a wrong expected version, then 65 and nothing changes
            let conflict = try await s.esctl("streams", "delete", "orders-1", "--expected-version", "1")
            #expect(conflict.status == 65 && conflict.stdout.isEmpty, "\(conflict)")
            // When it is deleted with the right one, then the deletion is printed
            let deleted = try await s.esctl("streams", "delete", "orders-1", "--expected-version", "2", "--json")
            #expect(deleted.status == 0, "\(deleted)")
            #expect(
                deleted.lines == [
                    #"{"stream":"orders-1","fromVersion":1,"toVersion":2,"count":2,"hard":false,"reason":"delete","types":["Placed","Shipped"],"position":4}"#
                ])
            // And show says what is left
            let shown = try await s.esctl("streams", "show", "orders-1", "--json")
            #expect(shown.lines == [#"{"stream":"orders-1","version":2,"firstVersion":3,"eventCount":0,"tombstoned":false,"retention":null}"#])
            #expect(try await s.esctl("read", "orders-1").stdout.isEmpty)
            // And the deleted id appended again writes nothing
            let again = try await s.esctl("append", "orders-1", "Placed", "--id", id)
            #expect(again.lines == ["position 1, stream orders-1 at version 2 (already recorded and deleted since; nothing written)"], "\(again)")
            #expect(try await s.esctl("stats", "--json").status == 0)
            // When the stream is recreated and deleted hard, then appends exit 1 with one sentence
            #expect(try await s.esctl("append", "orders-1", "Placed").lines == ["position 5, stream orders-1 at version 3"])
            let hard = try await s.esctl("streams", "delete", "orders-1", "--hard")
            #expect(hard.lines == ["orders-1: removed versions 3...3 (1 event), tombstoned; recorded at position 6"], "\(hard)")
            let refused = try await s.esctl("append", "orders-1", "Placed")
            #expect(refused.status == 1)
            #expect(refused.stderr == "esctl: The stream 'orders-1' was deleted for good (tombstoned) and takes no more events; use another stream name.\n")
            // And the store's own streams, and streams never written, are refused
            #expect(try await s.esctl("streams", "delete", "$deletions").status == 64)
            #expect(try await s.esctl("streams", "delete", "never-1").status == 67)
            #expect(try await s.esctl("streams", "show", "never-1").status == 67)
            // And verify accepts the holes
            let verify = try await s.esctl("verify")
            #expect(verify.status == 0, "\(verify)")
        }
    }

    @Test("retention: set, shown, applied by the next append, and by purge, which says what it removed", arguments: Store.allCases)
    func retentionAndPurge(_ kind: Store) async throws {
        try await withSandbox(kind) { s in
            // Given two streams of three events
            for stream in ["a-1", "b-1"] {
                for _ in 1...3 { #expect(try await s.esctl("append", stream, "Noted").status == 0) }
            }
            // When each is given a policy
            let set = try await s.esctl("streams", "retention", "a-1", "--max-count", "2", "--max-age", "90d")
            #expect(set.lines == ["a-1: retention max-count 2, max-age 7776000s"], "\(set)")
            #expect(try await s.esctl("streams", "retention", "b-1", "--truncate-before", "3").status == 0)
            #expect(try await s.esctl("streams", "retention", "b-1", "--max-age", "0").status == 64)
            // Then show prints it, and nothing is removed yet
            let shown = try await s.esctl("streams", "show", "a-1", "--json")
            #expect(shown.lines == [#"{"stream":"a-1","version":3,"firstVersion":1,"eventCount":3,"tombstoned":false,"retention":{"maxCount":2,"maxAgeSeconds":7776000}}"#])
            // When a-1 is appended to, then it keeps its newest 2
            #expect(try await s.esctl("append", "a-1", "Noted").status == 0)
            #expect(try await s.esctl("read", "a-1").lines.count == 2)
            // When purge runs, then b-1 loses versions 1...2 and purge says so; a second finds nothing
            let purged = try await s.esctl("purge", "--json")
            #expect(purged.status == 0, "\(purged)")
            let object = try #require(try s.objects(purged).first)
            #expect(object["removed"] as? Int == 2)
            #expect((object["deletions"] as? [[String: Any]])?.map { $0["stream"] as? String } == ["b-1"])
            #expect(try await s.esctl("purge").lines == ["nothing to remove"])
            #expect(try await s.esctl("read", "b-1").lines.count == 1)
            // And clearing the policy is retention with no limit
            #expect(try await s.esctl("streams", "retention", "a-1").lines == ["a-1: retention none"])
            #expect(try await s.esctl("verify").status == 0)
        }
    }

    @Test("a store with deletions exports, and imports into an empty store without its $deletions records, which verifies clean")
    func exportImportWithDeletions() async throws {
        let source = try EsctlSandbox(prefix: "esctl-streams-source")
        // Given a store with a deleted stream and a kept one
        #expect(try await source.esctl("append", "gone-1", "Placed").status == 0)
        #expect(try await source.esctl("append", "keep-1", "Kept").status == 0)
        #expect(try await source.esctl("streams", "delete", "gone-1").status == 0)
        let exported = try await source.esctl("export")
        #expect(exported.lines.count == 2, "\(exported)")
        // When its export is imported into an empty store
        let copy = try EsctlSandbox(prefix: "esctl-streams-copy")
        let imported = try await copy.esctl(["import", "-", "--json"], stdin: exported.stdout)
        // Then the deletion record is passed over, the kept event copied, and the copy verifies clean
        #expect(imported.status == 0, "\(imported)")
        let summary = try #require(try copy.objects(imported).first)
        #expect(summary["imported"] as? Int == 1 && summary["deletionRecordsPassedOver"] as? Int == 1)
        #expect(try await copy.esctl("read", "keep-1").lines.count == 1)
        #expect(try await copy.esctl("verify").status == 0)
    }
}
