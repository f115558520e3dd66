import EventStore
import EventStoreTesting
import Foundation
import Testing

@Suite("Idempotency by event id, on every backend")
struct IdempotencyConformanceTests {
    let a = UUID(uuidString: "6F1C1A52-8A2B-4C3D-9E4F-0A1B2C3D4E5F")!
    let b = UUID(uuidString: "7E2D2B63-9B3C-4D4E-8F50-1B2C3D4E5F60")!

    @Test("retrying an append with the same ids returns the original positions and writes nothing", arguments: Backend.allCases)
    func retryReturnsOriginals(_ backend: Backend) async throws {
        try await withLog(backend) { [a, b] f in
            // Given an append with ids, followed by another event
            let events = [event("One", #"{"x":1}"#, id: a), event("Two", id: b)]
            let original = try await f.log.append(to: "s", events: events, expectedVersion: .noStream)
            _ = try await f.log.append(to: "s", events: [event("Three")])
            let before = try await f.log.events()
            // When the same append is retried (its expectation no longer holds)
            let retry = try await f.log.append(to: "s", events: events, expectedVersion: .noStream)
            // Then the original positions and versions come back, and the log is unchanged
            let recordedAt = LogFixture.micros(ofRead: 0)
            #expect(original == AppendResult(stream: "s", positions: [1, 2], version: 2, alreadyRecorded: false, ids: [a, b], recordedAtMicroseconds: recordedAt))
            #expect(retry == AppendResult(stream: "s", positions: [1, 2], version: 2, alreadyRecorded: true, ids: [a, b], recordedAtMicroseconds: recordedAt))
            #expect(try await f.log.events() == before)
        }
    }

    struct OtherContent: Sendable, CustomTestStringConvertible {
        let what: String
        let stream: String
        let type: String
        let data: String
        let metadata: String
        var schemaVersion: UInt16 = 1
        var testDescription: String { what }
    }

    static let otherContents = [
        OtherContent(what: "other data", stream: "s", type: "One", data: #"{"x":2}"#, metadata: ""),
        OtherContent(what: "other type", stream: "s", type: "Other", data: #"{"x":1}"#, metadata: ""),
        OtherContent(what: "other metadata", stream: "s", type: "One", data: #"{"x":1}"#, metadata: #"{"m":1}"#),
        OtherContent(what: "other stream", stream: "t", type: "One", data: #"{"x":1}"#, metadata: ""),
        OtherContent(what: "other schema version", stream: "s", type: "One", data: #"{"x":1}"#, metadata: "", schemaVersion: 2),
    ]

    @Test("the same id with other content is an idempotency conflict and writes nothing", arguments: Backend.allCases, otherContents)
    func sameIDOtherContent(_ backend: Backend, _ other: OtherContent) async throws {
        try await withLog(backend) { [a] f in
            _ = try await f.log.append(to: "s", events: [event("One", #"{"x":1}"#, id: a)])
            let before = try await f.log.events()
            let error = await #expect(throws: EventStoreError.self, "\(other.what)") {
                var retried = event(other.type, other.data, id: a, metadata: other.metadata)
                retried.schemaVersion = other.schemaVersion
                return try await f.log.append(to: other.stream, events: [retried])
            }
            #expect(error?.code == .idempotencyConflict)
            #expect(error?.message.contains(a.lowercasedString) == true)
            #expect(try await f.log.events() == before)
        }
    }

    @Test("an append whose ids are partly recorded is a conflict and writes nothing", arguments: Backend.allCases)
    func partlyRecorded(_ backend: Backend) async throws {
        try await withLog(backend) { [a, b] f in
            _ = try await f.log.append(to: "s", events: [event("One", id: a)])
            let before = try await f.log.events()
            let error = await #expect(throws: EventStoreError.self) {
                try await f.log.append(to: "s", events: [event("One", id: a), event("Two", id: b)])
            }
            #expect(error?.code == .idempotencyConflict)
            #expect(try await f.log.events() == before)
        }
    }

    @Test("the same id twice in one append is invalid input", arguments: Backend.allCases)
    func sameIDTwiceInOneAppend(_ backend: Backend) async throws {
        try await withLog(backend) { [a] (f) async throws in
            let error = await #expect(throws: EventStoreError.self) {
                try await f.log.append(to: "s", events: [event("One", id: a), event("Two", id: a)])
            }
            #expect(error?.code == .invalidInput)
            #expect(try await f.log.headPosition() == 0)
        }
    }

    @Test("a generated id that is already recorded fails that append alone, after a rollback", arguments: Backend.allCases)
    func generatedDuplicateIsRolledBack(_ backend: Backend) async throws {
        // Given a store whose id generator always returns the same id, and one event with it
        let fixed = SequentialIDs.id(42)
        try await withLog(backend, idGenerator: { fixed }) { [a] f in
            _ = try await f.log.append(to: "s", events: [event("One")])
            // When another event without an id is appended
            let error = await #expect(throws: EventStoreError.self) {
                try await f.log.append(to: "t", events: [event("Two")])
            }
            // Then it fails, and neither the event nor the new stream is left behind
            #expect(error?.code == .idempotencyConflict)
            #expect(try await f.log.headPosition() == 1)
            #expect(try await f.log.streamVersion("t") == 0)
            #expect(try await f.log.statistics().streamCount == 1)
            // And an append with its own id still works
            let next = try await f.log.append(to: "t", events: [event("Three", id: a)])
            #expect(next.positions == [2])
        }
    }
}

@Suite("Looking an event up by its id, on every backend")
struct EventByIDConformanceTests {
    @Test("an id names its event, whatever its stream; an unknown id names none", arguments: Backend.allCases)
    func lookUp(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given events with ids in two streams, and one without an id
            let first = UUID(uuidString: "11111111-2222-4333-8444-555555555555")!
            let second = UUID(uuidString: "21111111-2222-4333-8444-555555555555")!
            _ = try await f.log.append(to: "a", events: [event("One", #"{"n":1}"#, id: first)])
            _ = try await f.log.append(to: "b", events: [event("Plain"), event("Two", #"{"n":2}"#, id: second, metadata: "{}")])
            // When each is looked up, then the event comes back whole
            let all = try await f.log.events()
            #expect(try await f.log.event(withID: first) == all[0])
            #expect(try await f.log.event(withID: second) == all[2])
            #expect(try await f.log.event(withID: all[1].id) == all[1], "generated ids are in the table too")
            #expect(try await f.log.event(withID: UUID(uuidString: "31111111-2222-4333-8444-555555555555")!) == nil)
            await f.log.close()
            let error = await #expect(throws: EventStoreError.self) { try await f.log.event(withID: first) }
            #expect(error?.code == .closed)
        }
    }
}
