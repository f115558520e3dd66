import Foundation
import Testing
import TestSupport

@Suite("esctl tracking, append --track and query --min-position")
struct EsctlTrackingTests {
    let sandbox: EsctlSandbox

    init() throws {
        sandbox = try EsctlSandbox(prefix: "esctl-tracking")
    }

    func esctl(_ arguments: [String], stdin: String? = nil) async throws -> ProcessOutput {
        try await sandbox.esctl(arguments, stdin: stdin)
    }

    @Test("--track records the position with the batch; a handled position exits 65 and writes nothing")
    func trackedBatches() async throws {
        // Given an order a processor in another language reacts to
        _ = try await esctl(["append", "order-1", "OrderPlaced"])
        #expect(try await esctl(["tracking", "mailer"]).lines == ["0"])
        let reaction = #"{"stream":"mail-1","type":"MailDue","data":{"for":1}}"#
        // When it appends its reaction with the position handled
        let first = try await esctl(["append", "--batch", "-", "--track", "mailer:1"], stdin: reaction)
        #expect(first.status == 0, "\(first)")
        #expect(first.lines == ["position 2, stream mail-1 at version 1"])
        #expect(try await esctl(["tracking", "mailer", "--json"]).lines == [#"{"name":"mailer","position":1}"#])
        // Then a second try at the same position (a restart before it learned of the first) is refused
        let again = try await esctl(["append", "--batch", "-", "--track", "mailer:1"], stdin: reaction)
        #expect(again.status == 65)
        #expect(again.stdout.isEmpty)
        #expect(again.stderr == "esctl: 'mailer' has already recorded position 1, so position 1 was handled before; nothing was written.\n")
        #expect(try await sandbox.eventCount() == 2)
        // And an empty batch moves the position on when an event calls for no reaction
        _ = try await esctl(["append", "order-2", "OrderPlaced"])
        let empty = try await esctl(["append", "--batch", "-", "--track", "mailer:3", "--json"], stdin: "")
        #expect(empty.status == 0, "\(empty)")
        #expect(empty.lines == [#"{"name":"mailer","position":3}"#])
        #expect(try await esctl(["tracking", "mailer"]).lines == ["3"])
        #expect(try await sandbox.eventCount() == 3)
        // And a position beyond the head is refused: a processor handles events that exist
        let beyond = try await esctl(["append", "--batch", "-", "--track", "mailer:9"], stdin: "")
        #expect(beyond.status == 64)
        #expect(try await esctl(["tracking", "mailer"]).lines == ["3"])
    }

    @Test("bad --track values and --track without --batch are usage errors")
    func badTrackValues() async throws {
        for value in ["mailer", "mailer:0", "mailer:-1", ":3", "mailer:x", "mailer:+5", "mailer: 5", "mailer:18446744073709551616"] {
            let output = try await esctl(["append", "--batch", "-", "--track", value], stdin: #"{"stream":"s","type":"T"}"#)
            #expect(output.status == 64, "\(value): \(output)")
        }
        let single = try await esctl(["append", "s", "T", "--track", "mailer:1"])
        #expect(single.status == 64)
        #expect(single.stderr.contains("--track goes with --batch"))
        #expect(try await sandbox.eventCount() == 0)
    }

    @Test("query --min-position answers once the position is applied, and exits 75 when it never comes")
    func minPosition() async throws {
        _ = try await esctl(["append", "order-1", "OrderPlaced"])
        let ready = try await esctl(["query", "count-by-type", "--min-position", "1", "--json"])
        #expect(ready.status == 0, "\(ready)")
        #expect(ready.lines == [#"{"types":{"OrderPlaced":1},"total":1}"#])
        let late = try await esctl(["query", "count-by-type", "--min-position", "3", "--timeout", "0.2"])
        #expect(late.status == 75)
        #expect(late.stderr == "esctl: The projection 'count-by-type' did not reach position 3 within 0.2 s (it is at 1, the head is 1).\n")
        let both = try await esctl(["query", "count-by-type", "--min-position", "1", "--as-of", "1"])
        #expect(both.status == 64)
    }
}
