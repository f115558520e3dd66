import EventStore
import EventStoreTesting
import Foundation
import Testing

@Suite("Atomic appends across streams, on every backend")
struct MultiStreamAppendConformanceTests {
    @Test("one call appends to several streams atomically, in order, at consecutive positions", arguments: Backend.allCases)
    func appendsToSeveralStreams(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "camper-1", events: [event("CamperAdded")])
            let results = try await f.log.append([
                StreamAppend(stream: "camper-1", events: [event("Reserved")], expectedVersion: .exact(1)),
                StreamAppend(stream: "site-15", events: [event("Booked"), event("Paid")], expectedVersion: .noStream),
            ])
            #expect(results == [
                AppendResult(stream: "camper-1", positions: [2], version: 2, alreadyRecorded: false, ids: [SequentialIDs.id(2)], recordedAtMicroseconds: LogFixture.micros(ofRead: 1)),
                AppendResult(stream: "site-15", positions: [3, 4], version: 2, alreadyRecorded: false, ids: [SequentialIDs.id(3), SequentialIDs.id(4)], recordedAtMicroseconds: LogFixture.micros(ofRead: 1)),
            ])
            #expect(try await f.log.events().map { "\($0.stream)@\($0.version)" } == ["camper-1@1", "camper-1@2", "site-15@1", "site-15@2"])
        }
    }

    @Test("a stream may come back in a later part of a call: events keep the order given", arguments: Backend.allCases)
    func interleavedParts(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "a", events: [event("A0")])
            let results = try await f.log.append([
                StreamAppend(stream: "a", events: [event("A1")], expectedVersion: .exact(1)),
                StreamAppend(stream: "b", events: [event("B1"), event("B2")], expectedVersion: .noStream),
                StreamAppend(stream: "a", events: [event("A2"), event("A3")]),
                StreamAppend(stream: "b", events: [event("B3")]),
            ])
            #expect(results == [
                AppendResult(stream: "a", positions: [2], version: 2, alreadyRecorded: false, ids: [SequentialIDs.id(2)], recordedAtMicroseconds: LogFixture.micros(ofRead: 1)),
                AppendResult(stream: "b", positions: [3, 4], version: 2, alreadyRecorded: false, ids: [SequentialIDs.id(3), SequentialIDs.id(4)], recordedAtMicroseconds: LogFixture.micros(ofRead: 1)),
                AppendResult(stream: "a", positions: [5, 6], version: 4, alreadyRecorded: false, ids: [SequentialIDs.id(5), SequentialIDs.id(6)], recordedAtMicroseconds: LogFixture.micros(ofRead: 1)),
                AppendResult(stream: "b", positions: [7], version: 3, alreadyRecorded: false, ids: [SequentialIDs.id(7)], recordedAtMicroseconds: LogFixture.micros(ofRead: 1)),
            ])
            #expect(try await f.log.events().map(\.type) == ["A0", "A1", "B1", "B2", "A2", "A3", "B3"])
            #expect(try await f.log.events(of: "a").map(\.type) == ["A0", "A1", "A2", "A3"])
            #expect(try await f.log.statistics().streamCount == 2)
            // The same call again, with ids, is recognised as already recorded.
            let ids = (1...3).map { SequentialIDs.id(900 + $0) }
            let withIDs = [
                StreamAppend(stream: "c", events: [event("C", id: ids[0])]), StreamAppend(stream: "d", events: [event("D", id: ids[1])]),
                StreamAppend(stream: "c", events: [event("C", id: ids[2])]),
            ]
            let first = try await f.log.append(withIDs)
            let again = try await f.log.append(withIDs)
            #expect(again.map(\.positions) == first.map(\.positions) && again.allSatisfy(\.alreadyRecorded))
        }
    }

    @Test("a stream that comes back in a later part with an expectation is refused, whatever came before it, and nothing is written", arguments: Backend.allCases)
    func aRepeatedStreamTakesNoSecondExpectation(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a stream at version 1
            _ = try await f.log.append(to: "a", events: [event("A0")])
            let message = "The stream 'a' appears again in one append with an expected version; give its expectation on its first part only."
            // When a later part of a call names it again with an expectation, after a part with
            // one or after a part without
            for first in [ExpectedVersion.exact(1), .any] {
                let error = await #expect(throws: EventStoreError.self) {
                    try await f.log.append([
                        StreamAppend(stream: "a", events: [event("A1")], expectedVersion: first),
                        StreamAppend(stream: "b", events: [event("B1")]),
                        StreamAppend(stream: "a", events: [event("A2")], expectedVersion: .exact(2)),
                    ])
                }
                // Then it is refused with invalidInput, and nothing is written
                #expect(error?.code == .invalidInput)
                #expect(error?.message == message)
            }
            #expect(try await f.log.events().map(\.type) == ["A0"])
        }
    }

    @Test("one failing expectation leaves every stream untouched, and the error names each failing stream", arguments: Backend.allCases)
    func oneFailingExpectationWritesNothing(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given three streams
            _ = try await f.log.append([
                StreamAppend(stream: "a", events: [event("A")]),
                StreamAppend(stream: "b", events: [event("B"), event("B")]),
            ])
            let before = try await f.log.events()
            // When a call holds one good and two stale expectations
            let error = await #expect(throws: EventStoreError.self) {
                try await f.log.append([
                    StreamAppend(stream: "a", events: [event("A2")], expectedVersion: .exact(1)),
                    StreamAppend(stream: "b", events: [event("B2")], expectedVersion: .exact(1)),
                    StreamAppend(stream: "c", events: [event("C")], expectedVersion: .streamExists),
                ])
            }
            // Then nothing is written anywhere, and both failures are named
            #expect(error?.code == .versionConflict)
            #expect(error?.conflicts == [
                VersionConflict(stream: "b", expected: .exact(1), actual: 2),
                VersionConflict(stream: "c", expected: .streamExists, actual: 0),
            ])
            #expect(error?.message.contains("stream 'b' expected version 1 but is at version 2") == true)
            #expect(error?.message.contains("stream 'c' expected an existing stream but is at no stream") == true)
            #expect(try await f.log.events() == before)
            #expect(try await f.log.statistics().streamCount == 2)
        }
    }

    @Test("retrying a whole multi-stream call with the same ids returns the originals and writes nothing", arguments: Backend.allCases)
    func idempotentRetryOfABatch(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let call = [
                StreamAppend(stream: "order-1", events: [event("Placed", id: SequentialIDs.id(101))], expectedVersion: .noStream),
                StreamAppend(stream: "payment-1", events: [event("Paid", id: SequentialIDs.id(102)), event("Cleared", id: SequentialIDs.id(103))], expectedVersion: .noStream),
            ]
            let original = try await f.log.append(call)
            let before = try await f.log.events()
            let retry = try await f.log.append(call)
            #expect(retry == original.map { AppendResult(
                stream: $0.stream, positions: $0.positions, version: $0.version, alreadyRecorded: true, ids: $0.ids,
                recordedAtMicroseconds: $0.recordedAtMicroseconds) })
            #expect(original.map(\.ids) == [[SequentialIDs.id(101)], [SequentialIDs.id(102), SequentialIDs.id(103)]])
            #expect(original.map(\.recordedAtMicroseconds) == [LogFixture.micros(ofRead: 0), LogFixture.micros(ofRead: 0)])
            #expect(try await f.log.events() == before)
        }
    }

    @Test("idempotency holds across the whole call: an id recorded in another stream is a conflict", arguments: Backend.allCases)
    func idempotencyAcrossTheCall(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "a", events: [event("E", id: SequentialIDs.id(7))])
            let before = try await f.log.events()
            let error = await #expect(throws: EventStoreError.self) {
                try await f.log.append([
                    StreamAppend(stream: "b", events: [event("New")]),
                    StreamAppend(stream: "c", events: [event("E", id: SequentialIDs.id(7))]),
                ])
            }
            #expect(error?.code == .idempotencyConflict)
            #expect(try await f.log.events() == before)
        }
    }

    @Test("concurrent multi-stream calls never interleave: each call's events take consecutive positions", arguments: Backend.allCases)
    func concurrentCallsDoNotInterleave(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            let log = f.log
            let results = try await withThrowingTaskGroup(of: [AppendResult].self) { group in
                for call in 0..<40 {
                    group.addTask {
                        try await log.append([
                            StreamAppend(stream: "shared-\(call % 3)", events: [event("E", #"{"call":\#(call)}"#), event("E", #"{"call":\#(call)}"#)]),
                            StreamAppend(stream: "own-\(call)", events: [event("F", #"{"call":\#(call)}"#)]),
                            StreamAppend(stream: "shared-\((call + 1) % 3)", events: [event("G", #"{"call":\#(call)}"#)]),
                        ])
                    }
                }
                return try await group.reduce(into: [[AppendResult]]()) { $0.append($1) }
            }
            #expect(results.count == 40)
            for result in results {
                let positions = result.flatMap(\.positions)
                #expect(positions == Array(positions[0]...(positions[0] + 3)))
            }
            let all = try await log.events()
            #expect(all.map(\.position) == Array(1...160))
            for stream in ["shared-0", "shared-1", "shared-2"] {
                let versions = try await log.events(of: stream).map(\.version)
                #expect(versions == Array(1...UInt64(versions.count)))
            }
        }
    }
}
