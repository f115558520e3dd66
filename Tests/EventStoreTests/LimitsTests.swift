import EventStore
import Foundation
import Testing
import TestSupport

@Suite("Input limits")
struct LimitsTests {
    static let badAppends: [(String, [StreamAppend])] = [
        ("no stream at all", []),
        ("an empty stream name", [StreamAppend(stream: "", events: [event("T")])]),
        ("a 201-byte stream name", [StreamAppend(stream: String(repeating: "s", count: 201), events: [event("T")])]),
        ("a 300-byte stream name", [StreamAppend(stream: String(repeating: "é", count: 150), events: [event("T")])]),
        ("a newline in a stream name", [StreamAppend(stream: "a\nb", events: [event("T")])]),
        ("a bell in a stream name", [StreamAppend(stream: "a\u{7}b", events: [event("T")])]),
        ("a C1 control in a stream name", [StreamAppend(stream: "a\u{85}b", events: [event("T")])]),
        ("an empty type", [StreamAppend(stream: "s", events: [event("")])]),
        ("a 201-byte type", [StreamAppend(stream: "s", events: [event(String(repeating: "t", count: 201))])]),
        ("a tab in a type", [StreamAppend(stream: "s", events: [event("a\tb")])]),
        ("no events", [StreamAppend(stream: "s", events: [])]),
        ("an expectation on a stream's second part", [StreamAppend(stream: "s", events: [event("T")]), StreamAppend(stream: "s", events: [event("T")], expectedVersion: .exact(1))]),
        ("data over 16 MiB", [StreamAppend(stream: "s", events: [NewEvent(type: "T", data: Data(count: (16 << 20) + 1))])]),
        ("metadata over 64 KiB", [StreamAppend(stream: "s", events: [NewEvent(type: "T", metadata: Data(count: (64 << 10) + 1))])]),
        ("10,001 events", [StreamAppend(stream: "s", events: Array(repeating: event("T"), count: 10_001))]),
        ("10,001 events over two streams", [
            StreamAppend(stream: "s", events: Array(repeating: event("T"), count: 5_000)),
            StreamAppend(stream: "t", events: Array(repeating: event("T"), count: 5_001)),
        ]),
        ("a bad event after good ones", [StreamAppend(stream: "s", events: [event("Good"), event("Good"), event("")])]),
    ]

    @Test("bad input is rejected with a clear error and nothing is written", arguments: badAppends)
    func badInput(_ what: String, _ appends: [StreamAppend]) async throws {
        let f = try StoreFixture()
        _ = try await f.store.append(to: "existing", events: [event("T")])
        let before = try f.store.read(limit: .max)
        let error = await #expect(throws: EventStoreError.self, "\(what)") { try await f.store.append(appends) }
        #expect(error?.code == .invalidInput)
        #expect(error.map { !$0.message.isEmpty && $0.message.hasSuffix(".") } == true)
        #expect(try f.store.read(limit: .max) == before)
        #expect(try f.store.statistics().streamCount == 1)
    }

    @Test("input right at the limits is accepted")
    func atTheLimits() async throws {
        let f = try StoreFixture()
        let longName = String(repeating: "é", count: 100)  // 200 bytes
        let result = try await f.store.append([
            StreamAppend(stream: longName, events: [NewEvent(type: longName, data: Data(count: 16 << 20), metadata: Data(count: 64 << 10))]),
            StreamAppend(stream: "many", events: Array(repeating: event("T"), count: 9_999)),
        ])
        #expect(result.map(\.version) == [1, 9_999])
        #expect(try f.store.headPosition() == 10_000)
        let big = try #require(try f.store.event(at: 1))
        #expect(big.stream == longName && big.type == longName)
        #expect(big.data.count == 16 << 20 && big.metadata.count == 64 << 10)
    }

    @Test("validateName explains each rule")
    func validateNameMessages() {
        #expect(throws: EventStoreError.self) { try Limits.validateName("", kind: "stream") }
        #expect(throws: Never.self) { try Limits.validateName("fitness-alice", kind: "stream") }
        #expect(throws: Never.self) { try Limits.validateName("Nessie 🦕 moved", kind: "event type") }
    }

    @Test("a negative read limit is invalid input")
    func negativeLimit() throws {
        let f = try StoreFixture()
        #expect(throws: EventStoreError.self) { try f.store.read(limit: -1) }
        #expect(throws: EventStoreError.self) { try f.store.readStream("s", limit: -1) }
    }
}
