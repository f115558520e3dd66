import EventStore
import EventStoreTesting
import Foundation
import Testing

@Suite("Input limits, on every backend")
struct LimitsConformanceTests {
    struct BadAppend: Sendable, CustomTestStringConvertible {
        let what: String
        let appends: [StreamAppend]
        init(_ what: String, _ appends: [StreamAppend]) {
            self.what = what
            self.appends = appends
        }
        var testDescription: String { what }
    }

    static let badAppends: [BadAppend] = [
        BadAppend("no stream at all", []),
        BadAppend("an empty stream name", [StreamAppend(stream: "", events: [event("T")])]),
        BadAppend("a 201-byte stream name", [StreamAppend(stream: String(repeating: "s", count: 201), events: [event("T")])]),
        BadAppend("a 300-byte stream name", [StreamAppend(stream: String(repeating: "é", count: 150), events: [event("T")])]),
        BadAppend("a newline in a stream name", [StreamAppend(stream: "a\nb", events: [event("T")])]),
        BadAppend("a bell in a stream name", [StreamAppend(stream: "a\u{7}b", events: [event("T")])]),
        BadAppend("a C1 control in a stream name", [StreamAppend(stream: "a\u{85}b", events: [event("T")])]),
        BadAppend("a whitespace-only stream name", [StreamAppend(stream: " \u{3000}\t ".replacingOccurrences(of: "\t", with: " "), events: [event("T")])]),
        BadAppend("a right-to-left override in a stream name", [StreamAppend(stream: "invoice-\u{202E}fdp.exe", events: [event("T")])]),
        BadAppend("a bidirectional isolate in a type", [StreamAppend(stream: "s", events: [event("Order\u{2067}Placed")])]),
        BadAppend("a whitespace-only tag", [StreamAppend(stream: "s", events: [NewEvent(type: "T", tags: ["  "])])]),
        BadAppend("a whitespace-only type", [StreamAppend(stream: "s", events: [event("   ")])]),
        BadAppend("the store's $projections", [StreamAppend(stream: "$projections", events: [event("EventPassedOver")])]),
        BadAppend("the store's $tracking", [StreamAppend(stream: "$tracking", events: [event("T")])]),
        BadAppend("the store's $keys", [StreamAppend(stream: "$keys", events: [event("T")])]),
        BadAppend("a $ stream whose $ joins the next character (U+200D)", [StreamAppend(stream: "$\u{200D}projections", events: [event("EventPassedOver")])]),
        BadAppend("any $ stream, beside a good one", [StreamAppend(stream: "s", events: [event("T")]), StreamAppend(stream: "$mine", events: [event("T")])]),
        BadAppend("an empty type", [StreamAppend(stream: "s", events: [event("")])]),
        BadAppend("a 201-byte type", [StreamAppend(stream: "s", events: [event(String(repeating: "t", count: 201))])]),
        BadAppend("a tab in a type", [StreamAppend(stream: "s", events: [event("a\tb")])]),
        BadAppend("no events", [StreamAppend(stream: "s", events: [])]),
        BadAppend("an expectation on a stream's second part", [StreamAppend(stream: "s", events: [event("T")]), StreamAppend(stream: "s", events: [event("T")], expectedVersion: .exact(1))]),
        BadAppend("data over 16 MiB", [StreamAppend(stream: "s", events: [NewEvent(type: "T", data: Data(count: (16 << 20) + 1))])]),
        BadAppend("metadata over 64 KiB", [StreamAppend(stream: "s", events: [NewEvent(type: "T", metadata: Data(count: (64 << 10) + 1))])]),
        BadAppend("10,001 events", [StreamAppend(stream: "s", events: Array(repeating: event("T"), count: 10_001))]),
        BadAppend("10,001 events over two streams", [
            StreamAppend(stream: "s", events: Array(repeating: event("T"), count: 5_000)),
            StreamAppend(stream: "t", events: Array(repeating: event("T"), count: 5_001)),
        ]),
        BadAppend("a bad event after good ones", [StreamAppend(stream: "s", events: [event("Good"), event("Good"), event("")])]),
    ]

    @Test("bad input is rejected with a clear error and nothing is written", arguments: Backend.allCases, badAppends)
    func badInput(_ backend: Backend, _ bad: BadAppend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "existing", events: [event("T")])
            let before = try await f.log.events()
            let error = await #expect(throws: EventStoreError.self, "\(bad.what)") { try await f.log.append(bad.appends) }
            #expect(error?.code == .invalidInput)
            #expect(error.map { !$0.message.isEmpty && $0.message.hasSuffix(".") } == true)
            #expect(try await f.log.events() == before)
            #expect(try await f.log.statistics().streamCount == 1)
        }
    }

    @Test("input right at the limits is accepted", arguments: Backend.allCases)
    func atTheLimits(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let longName = String(repeating: "é", count: 100)  // 200 bytes
            let result = try await f.log.append([
                StreamAppend(stream: longName, events: [NewEvent(type: longName, data: Data(count: 16 << 20), metadata: Data(count: 64 << 10))]),
                StreamAppend(stream: "many", events: Array(repeating: event("T"), count: 9_999)),
            ])
            #expect(result.map(\.version) == [1, 9_999])
            #expect(try await f.log.headPosition() == 10_000)
            let big = try #require(try await f.log.event(at: 1))
            #expect(big.stream == longName && big.type == longName)
            #expect(big.data.count == 16 << 20 && big.metadata.count == 64 << 10)
        }
    }

    // No store: the rule both backends apply; runs once.
    @Test("validateName explains each rule")
    func validateNameMessages() {
        #expect(throws: EventStoreError.self) { try Limits.validateName("", kind: "stream") }
        #expect(throws: Never.self) { try Limits.validateName("fitness-alice", kind: "stream") }
        #expect(throws: Never.self) { try Limits.validateName("Nessie 🦕 moved", kind: "event type") }
    }

    @Test("a negative read limit is invalid input", arguments: Backend.allCases)
    func negativeLimit(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            await #expect(throws: EventStoreError.self) { try await f.log.events(limit: -1) }
            await #expect(throws: EventStoreError.self) { try await f.log.events(of: "s", limit: -1) }
        }
    }
}
