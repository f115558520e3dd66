import Foundation
import Testing
import TestSupport

/// `esctl group create|consume|show|parked|replay-parked|delete`.
@Suite("esctl group: consumer groups from the shell")
struct EsctlGroupTests {
    typealias Store = EsctlSandbox.Store

    @Test("create, consume with --exec (a failing command retried, then parked), show, parked, replay-parked, delete", arguments: Store.allCases)
    func groupFromTheShell(_ kind: Store) async throws {
        try await EsctlSandbox.with(kind, prefix: "esctl-group") { s in
            // Given a group that parks after 2 tries, and four events, the last a poison
            #expect(try await s.esctl("group", "create", "mail", "--max-tries", "2", "--partitions", "2").lines == ["group mail created"])
            #expect(try await s.esctl("group", "create", "mail", "--max-tries", "2", "--partitions", "2").lines == ["group mail exists already"])
            #expect(try await s.esctl("group", "create", "mail", "--max-tries", "3").status == 65)
            for n in 1...3 { #expect(try await s.esctl("append", "order-\(n)", "Placed", "--data", "{\"n\":\(n)}").status == 0) }
            #expect(try await s.esctl("append", "order-1", "Poison").status == 0)
            // When a member runs a command that fails on the poison
            let consumed = try await s.esctl(
                "group", "consume", "mail", "--member", "m1", "--exec", "grep -q Poison && exit 3; cat > /dev/null", "--count", "5", "--poll", "0.05",
                "--json", "--timeout", "30")
            #expect(consumed.status == 0, "\(consumed)")
            let outcomes = try s.objects(consumed).map { "\($0["position"] as? Int ?? 0) \($0["outcome"] as? String ?? "")" }
            // Then the others are acknowledged and the poison retried once, then parked
            #expect(outcomes.sorted() == ["1 acknowledged", "2 acknowledged", "3 acknowledged", "4 parked", "4 retried"], "\(outcomes)")
            #expect(outcomes.firstIndex(of: "1 acknowledged")! < outcomes.firstIndex(of: "4 retried")!, "order within order-1")
            let shown = try #require(try s.objects(try await s.esctl("group", "show", "mail", "--json")).first)
            #expect(shown["checkpoint"] as? Int == 4 && shown["lag"] as? Int == 0 && shown["parked"] as? Int == 1 && (shown["members"] as? [String]) == [])
            #expect(try await s.esctl("group", "parked", "mail").lines == ["4 order-1 Poison tries 2: failed 2 tries"])
            // When it is replayed, then a member receives it again, and acknowledged it leaves the list
            #expect(try await s.esctl("group", "replay-parked", "mail").lines == ["1 parked event marked for replay"])
            let replayed = try await s.esctl("group", "consume", "mail", "--member", "m2", "--exec", "cat > /dev/null", "--count", "1", "--json", "--poll", "0.05", "--timeout", "30")
            #expect(replayed.lines.first?.contains(#""position":4"#) == true && replayed.lines.first?.contains(#""replay":true"#) == true, "\(replayed)")
            #expect(try await s.esctl("group", "parked", "mail").lines.isEmpty)
            // And a consume with nothing to do ends with 75 at its timeout
            #expect(try await s.esctl("group", "consume", "mail", "--member", "m3", "--exec", "true", "--timeout", "0.5", "--poll", "0.05").status == 75)
            // And delete removes it; a missing group is 67, a bad name 64
            #expect(try await s.esctl("group", "delete", "mail").lines == ["group mail deleted"])
            #expect(try await s.esctl("group", "show", "mail").status == 67)
            #expect(try await s.esctl("group", "create", "").status == 64)
            #expect(try await s.esctl("group", "create", "x", "--partition-by", "colour").status == 64)
        }
    }
}
