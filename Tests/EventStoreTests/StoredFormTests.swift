import EventStore
import Foundation
import Testing
import TestSupport

/// JSON data and metadata are stored without insignificant white space, so the same JSON is
/// the same content; other bytes are kept as given. Recorded times may be given for copies.
@Suite("Stored form and recorded times")
struct StoredFormTests {
    @Test("JSON loses the white space outside its strings and nothing else; other bytes stay as they are", arguments: [
        (" { \"b\" : 1.50 ,\n\t\"a\": \"x y\\n\" } ", #"{"b":1.50,"a":"x y\n"}"#),
        ("[ 1e3, -0, \"\\u0041\" ]", #"[1e3,-0,"\u0041"]"#),
        (#"{"already":"compact"}"#, #"{"already":"compact"}"#),
        ("\"a string \\\" with a quote\"", "\"a string \\\" with a quote\""),
        ("not json at all", "not json at all"),
        ("{\"broken\": ", "{\"broken\": "),
        ("", ""),
    ])
    func storedForm(given: String, stored: String) {
        #expect(StoredForm.of(Data(given.utf8)) == Data(stored.utf8))
    }

    @Test("the same JSON spaced differently is the same content: an append with its id again is already recorded")
    func sameJSONSameContent() async throws {
        let f = try StoreFixture()
        let id = SequentialIDs.id(99)
        let first = try await f.store.append(to: "s", events: [event("T", "{ \"n\" : 1 }", id: id, metadata: "{\"by\": \"ann\"}")])
        let again = try await f.store.append(to: "s", events: [event("T", #"{"n":1}"#, id: id, metadata: "{ \"by\":\"ann\" }")])
        #expect(again.alreadyRecorded && again.positions == first.positions)
        #expect(try f.store.event(at: 1)?.data == Data(#"{"n":1}"#.utf8))
        #expect(try f.store.event(at: 1)?.metadata == Data(#"{"by":"ann"}"#.utf8))
        // Other JSON is other content
        let other = await #expect(throws: EventStoreError.self) {
            try await f.store.append(to: "s", events: [event("T", #"{"n":1.0}"#, id: id, metadata: #"{"by":"ann"}"#)])
        }
        #expect(other?.code == .idempotencyConflict)
        // Bytes that are not JSON are compared as bytes
        let binaryID = SequentialIDs.id(100)
        _ = try await f.store.append(to: "b", events: [NewEvent(id: binaryID, type: "Bin", data: Data([0x20, 0x01, 0x20]))])
        #expect(try await f.store.append(to: "b", events: [NewEvent(id: binaryID, type: "Bin", data: Data([0x20, 0x01, 0x20]))]).alreadyRecorded)
        let binaryOther = await #expect(throws: EventStoreError.self) {
            try await f.store.append(to: "b", events: [NewEvent(id: binaryID, type: "Bin", data: Data([0x01]))])
        }
        #expect(binaryOther?.code == .idempotencyConflict)
    }

    @Test("an event may carry its recorded time (a copy); others take the store's clock; times out of range are refused")
    func recordedTimes() async throws {
        let f = try StoreFixture()
        let past: Int64 = 946_684_800_123_456  // 2000-01-01T00:00:00.123456Z
        _ = try await f.store.append(to: "s", events: [
            NewEvent(type: "Copied", recordedAtMicroseconds: past), NewEvent(type: "Now"),
        ])
        let events = try f.store.read(limit: .max)
        #expect(events.map(\.recordedAtMicroseconds) == [past, StoreFixture.micros(ofRead: 0)])
        #expect(ISO8601.string(microseconds: events[0].recordedAtMicroseconds) == "2000-01-01T00:00:00.123456Z")
        for outside in [Limits.recordedAtRange.lowerBound - 1, Limits.recordedAtRange.upperBound + 1] {
            let error = await #expect(throws: EventStoreError.self) {
                try await f.store.append(to: "s", events: [NewEvent(type: "T", recordedAtMicroseconds: outside)])
            }
            #expect(error?.code == .invalidInput)
        }
        #expect(try f.store.headPosition() == 2)
    }

    @Test("ISO 8601 text parses back to the microseconds it was written from, and odd text is refused")
    func parsingTimes() {
        for micros: Int64 in [0, 1, -1, 946_684_800_123_456, Limits.recordedAtRange.lowerBound, Limits.recordedAtRange.upperBound] {
            #expect(ISO8601.microseconds(parsing: ISO8601.string(microseconds: micros)) == micros)
        }
        #expect(ISO8601.microseconds(parsing: "2026-11-22T08:30:00Z") == 1_795_336_200_000_000)
        #expect(ISO8601.microseconds(parsing: "2026-11-22T09:30:00.5+01:00") == 1_795_336_200_500_000)
        for bad in ["", "2026-11-22", "2026-02-30T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T08:30:00.1234567Z", "2026-11-22T08:30:00", "x2026-11-22T08:30:00Z"] {
            #expect(ISO8601.microseconds(parsing: bad) == nil, "\(bad)")
        }
    }
}
