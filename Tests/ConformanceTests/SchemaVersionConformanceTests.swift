@testable import EventStoreCore
@testable import EventStoreLMDB
import EventStoreTesting
import Foundation
import Testing

@Suite("Schema versions recorded with events, on every backend")
struct SchemaVersionConformanceTests {
    /// An event written in version `schemaVersion` of its type's schema.
    func evolved(_ type: String, _ json: String = "{}", id: UUID? = nil, schemaVersion: UInt16) -> NewEvent {
        NewEvent(id: id, type: type, data: Data(json.utf8), schemaVersion: schemaVersion)
    }

    @Test("each event's schema version is recorded and every read path gives it back; 1 unless given", arguments: Backend.allCases)
    func everyReadPath(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given events of versions 1 (by default), 3 and the largest, 65,535
            let id = UUID()
            _ = try await f.log.append(to: "s-1", events: [
                event("Added"), evolved("Added", id: id, schemaVersion: 3), evolved("Renamed", schemaVersion: .max),
            ])
            let expected: [UInt16] = [1, 3, .max]
            // When they are read back through every path, then each has its version
            #expect(try await f.log.events().map(\.schemaVersion) == expected, "read")
            #expect(try await f.log.events(of: "s-1").map(\.schemaVersion) == expected, "readStream forward")
            #expect(try await f.log.events(of: "s-1", direction: .backward).map(\.schemaVersion) == expected.reversed(), "readStream backward")
            #expect(try await f.log.event(at: 2)?.schemaVersion == 3, "event(at:)")
            #expect(try await f.log.event(withID: id)?.schemaVersion == 3, "event(withID:)")
            var paged: [UInt16] = []
            for try await event in f.log.events(from: 1, through: .max, filter: .all, pageSize: 2) { paged.append(event.schemaVersion) }
            #expect(paged == expected, "events(from:) pages")
            let collector = EventCollector(f.log.subscription(from: .start))
            #expect(try await collector.take(3, within: .seconds(30)).map(\.schemaVersion) == expected, "subscription catch-up")
            _ = try await f.log.append(to: "s-1", events: [evolved("Added", schemaVersion: 2)])
            #expect(try await collector.take(1, within: .seconds(30)).map(\.schemaVersion) == [2], "subscription live")
            // And verify accepts them
            let report = try await f.log.verify()
            #expect(report.isClean, "\(report.problems)")
        }
    }

    @Test("schema version 0 is invalid input and writes nothing", arguments: Backend.allCases)
    func zeroRefused(_ backend: Backend) async throws {
        try await withLog(backend) { (f) async throws in
            let error = await #expect(throws: EventStoreError.self) {
                try await f.log.append(to: "s", events: [evolved("Added", schemaVersion: 0)])
            }
            #expect(error?.code == .invalidInput)
            #expect(error?.message == "An event's schema version is 0; schema versions start at 1.")
            #expect(try await f.log.headPosition() == 0)
        }
    }

    @Test("a retry with the same id and schema version is a retry; another schema version is other content", arguments: Backend.allCases)
    func idempotency(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let id = UUID()
            let original = try await f.log.append(to: "s", events: [evolved("Added", #"{"x":1}"#, id: id, schemaVersion: 2)])
            let retry = try await f.log.append(to: "s", events: [evolved("Added", #"{"x":1}"#, id: id, schemaVersion: 2)])
            #expect(retry.alreadyRecorded && retry.positions == original.positions)
            let error = await #expect(throws: EventStoreError.self) {
                try await f.log.append(to: "s", events: [evolved("Added", #"{"x":1}"#, id: id, schemaVersion: 3)])
            }
            #expect(error?.code == .idempotencyConflict)
            #expect(try await f.log.headPosition() == 1)
        }
    }
}
