import EventStore
import Foundation
import Testing
import TestSupport

@Suite("Idempotency by event id")
struct IdempotencyTests {
    let a = UUID(uuidString: "6F1C1A52-8A2B-4C3D-9E4F-0A1B2C3D4E5F")!
    let b = UUID(uuidString: "7E2D2B63-9B3C-4D4E-8F50-1B2C3D4E5F60")!

    @Test("retrying an append with the same ids returns the original positions and writes nothing")
    func retryReturnsOriginals() async throws {
        // Given an append with ids, followed by another event
        let f = try StoreFixture()
        let events = [event("One", #"{"x":1}"#, id: a), event("Two", id: b)]
        let original = try await f.store.append(to: "s", events: events, expectedVersion: .noStream)
        _ = try await f.store.append(to: "s", events: [event("Three")])
        let before = try f.store.read(limit: .max)
        // When the same append is retried (its expectation no longer holds)
        let retry = try await f.store.append(to: "s", events: events, expectedVersion: .noStream)
        // Then the original positions and versions come back, and the log is unchanged
        let recordedAt = StoreFixture.micros(ofRead: 0)
        #expect(original == AppendResult(stream: "s", positions: [1, 2], version: 2, alreadyRecorded: false, ids: [a, b], recordedAtMicroseconds: recordedAt))
        #expect(retry == AppendResult(stream: "s", positions: [1, 2], version: 2, alreadyRecorded: true, ids: [a, b], recordedAtMicroseconds: recordedAt))
        #expect(try f.store.read(limit: .max) == before)
    }

    @Test("the same id with other content is an idempotency conflict and writes nothing", arguments: [
        ("other data", "s", "One", #"{"x":2}"#, ""),
        ("other type", "s", "Other", #"{"x":1}"#, ""),
        ("other metadata", "s", "One", #"{"x":1}"#, #"{"m":1}"#),
        ("other stream", "t", "One", #"{"x":1}"#, ""),
    ])
    func sameIDOtherContent(_ what: String, stream: String, type: String, data: String, metadata: String) async throws {
        let f = try StoreFixture()
        _ = try await f.store.append(to: "s", events: [event("One", #"{"x":1}"#, id: a)])
        let before = try f.store.read(limit: .max)
        let error = await #expect(throws: EventStoreError.self, "\(what)") {
            try await f.store.append(to: stream, events: [event(type, data, id: a, metadata: metadata)])
        }
        #expect(error?.code == .idempotencyConflict)
        #expect(error?.message.contains(a.lowercasedString) == true)
        #expect(try f.store.read(limit: .max) == before)
    }

    @Test("an append whose ids are partly recorded is a conflict and writes nothing")
    func partlyRecorded() async throws {
        let f = try StoreFixture()
        _ = try await f.store.append(to: "s", events: [event("One", id: a)])
        let before = try f.store.read(limit: .max)
        let error = await #expect(throws: EventStoreError.self) {
            try await f.store.append(to: "s", events: [event("One", id: a), event("Two", id: b)])
        }
        #expect(error?.code == .idempotencyConflict)
        #expect(try f.store.read(limit: .max) == before)
    }

    @Test("the same id twice in one append is invalid input")
    func sameIDTwiceInOneAppend() async throws {
        let f = try StoreFixture()
        let error = await #expect(throws: EventStoreError.self) {
            try await f.store.append(to: "s", events: [event("One", id: a), event("Two", id: a)])
        }
        #expect(error?.code == .invalidInput)
        #expect(try f.store.headPosition() == 0)
    }

    @Test("a generated id that is already recorded fails that append alone, after a rollback")
    func generatedDuplicateIsRolledBack() async throws {
        // Given a store whose id generator always returns the same id, and one event with it
        let directory = try TemporaryDirectory()
        let fixed = SequentialIDs.id(42)
        let store = try EventStore(
            path: directory.appending("store"),
            configuration: Configuration(durability: .noSync, idGenerator: { fixed }))
        defer { store.close() }
        _ = try await store.append(to: "s", events: [event("One")])
        // When another event without an id is appended
        let error = await #expect(throws: EventStoreError.self) {
            try await store.append(to: "t", events: [event("Two")])
        }
        // Then it fails, and neither the event nor the new stream is left behind
        #expect(error?.code == .idempotencyConflict)
        #expect(try store.headPosition() == 1)
        #expect(try store.streamVersion("t") == 0)
        #expect(try store.statistics().streamCount == 1)
        // And an append with its own id still works
        let next = try await store.append(to: "t", events: [event("Three", id: a)])
        #expect(next.positions == [2])
    }
}

@Suite("Looking an event up by its id")
struct EventByIDTests {
    @Test("an id names its event, whatever its stream; an unknown id names none")
    func lookUp() async throws {
        // Given events with ids in two streams, and one without an id
        let f = try StoreFixture()
        let first = UUID(uuidString: "11111111-2222-4333-8444-555555555555")!
        let second = UUID(uuidString: "21111111-2222-4333-8444-555555555555")!
        _ = try await f.store.append(to: "a", events: [event("One", #"{"n":1}"#, id: first)])
        _ = try await f.store.append(to: "b", events: [event("Plain"), event("Two", #"{"n":2}"#, id: second, metadata: "{}")])
        // When each is looked up, then the event comes back whole
        let all = try f.store.read(limit: .max)
        #expect(try f.store.event(withID: first) == all[0])
        #expect(try f.store.event(withID: second) == all[2])
        #expect(try f.store.event(withID: all[1].id) == all[1], "generated ids are in the table too")
        #expect(try f.store.event(withID: UUID(uuidString: "31111111-2222-4333-8444-555555555555")!) == nil)
        f.store.close()
        let error = #expect(throws: EventStoreError.self) { try f.store.event(withID: first) }
        #expect(error?.code == .closed)
    }
}
