import EventStore
import EventStoreTesting
import Foundation
import Testing

/// Binary data, upstream tracking positions, and a condition with a tracking position: what the
/// gRPC face (UmaDB's protocol) needs of every backend.
@Suite("Binary data and upstream tracking, on every backend")
struct BinaryDataConformanceTests {
    @Test("binary data keeps its bytes and format, is compared byte for byte, and verifies", arguments: Backend.allCases)
    func binaryData(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given JSON bytes with white space, appended as binary with an id, and as JSON
            let bytes = Data("{ \"a\" : 1 }".utf8)
            let id = UUID()
            _ = try await f.log.append(to: "s", events: [NewEvent(id: id, type: "T", data: bytes, dataFormat: .binary)])
            _ = try await f.log.append(to: "s", events: [NewEvent(type: "T", data: bytes)])
            // Then the binary one reads back as given, the JSON one compacted
            let events = try await f.log.events()
            #expect(events.map(\.data) == [bytes, Data(#"{"a":1}"#.utf8)])
            #expect(events.map(\.dataFormat) == [.binary, .json])
            // And a retry of the binary one is recorded already; as JSON it conflicts
            #expect(try await f.log.append(to: "s", events: [NewEvent(id: id, type: "T", data: bytes, dataFormat: .binary)]).alreadyRecorded)
            let conflict = await #expect(throws: EventStoreError.self) {
                try await f.log.append(to: "s", events: [NewEvent(id: id, type: "T", data: bytes)])
            }
            #expect(conflict?.code == .idempotencyConflict)
            let report = try await f.log.verify()
            #expect(report.isClean, "verify with binary data: \(report.problems)")
        }
    }

    @Test("an upstream tracking position is not bounded by the head, and must still increase", arguments: Backend.allCases)
    func upstreamTracking(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given an empty log, when a position of another source is recorded with an event
            let upstream = TrackingPosition(name: "feed", position: 500, upstream: true)
            _ = try await f.log.append([StreamAppend(stream: "s", events: [event("T")])], tracking: upstream)
            // Then it is recorded; the same again is refused and writes nothing
            #expect(try await f.log.trackingPosition(of: "feed") == 500)
            let again = await #expect(throws: EventStoreError.self) {
                try await f.log.append([StreamAppend(stream: "s", events: [event("T")])], tracking: upstream)
            }
            #expect(again?.code == .alreadyProcessed)
            #expect(try await f.log.headPosition() == 1)
        }
    }

    @Test("a condition and a tracking position in one append: either refusal writes nothing", arguments: Backend.allCases)
    func conditionWithTracking(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given one event tagged x
            _ = try await f.log.append(to: "s", events: [NewEvent(type: "T", data: Data("{}".utf8), tags: ["x"])])
            let appends = [StreamAppend(stream: "s", events: [event("U")])]
            // When the condition fails, nothing is written and no position recorded
            let failed = await #expect(throws: EventStoreError.self) {
                try await f.log.append(
                    appends, condition: AppendCondition(failIfEventsMatch: EventQuery(tags: ["x"])),
                    tracking: TrackingPosition(name: "feed", position: 7, upstream: true))
            }
            #expect(failed?.code == .conditionFailed)
            #expect(try await f.log.trackingPosition(of: "feed") == 0)
            // When it passes, both commit
            _ = try await f.log.append(
                appends, condition: AppendCondition(failIfEventsMatch: EventQuery(tags: ["x"]), after: 1),
                tracking: TrackingPosition(name: "feed", position: 7, upstream: true))
            #expect(try await f.log.trackingPosition(of: "feed") == 7)
            // When the tracking position was handled already, nothing is written
            let handled = await #expect(throws: EventStoreError.self) {
                try await f.log.append(
                    appends, condition: AppendCondition(failIfEventsMatch: EventQuery(tags: ["y"])),
                    tracking: TrackingPosition(name: "feed", position: 7, upstream: true))
            }
            #expect(handled?.code == .alreadyProcessed)
            #expect(try await f.log.headPosition() == 2)
        }
    }
}
