import EventStore
import EventStoreTesting
import Foundation
import Testing

@Suite("Tracking positions, on every backend")
struct TrackingConformanceTests {
    @Test("an append with a tracking position records it with the events", arguments: Backend.allCases)
    func recordsWithEvents(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a store with one event a processor reacts to
            _ = try await f.log.append(to: "orders-1", events: [event("OrderPlaced")])
            #expect(try await f.log.trackingPosition(of: "mailer") == 0)
            // When the processor appends its reaction with the position handled
            let results = try await f.log.append(
                [StreamAppend(stream: "mails-1", events: [event("MailDue")])], tracking: TrackingPosition(name: "mailer", position: 1))
            // Then both are recorded
            #expect(results.map(\.positions) == [[2]])
            #expect(try await f.log.trackingPosition(of: "mailer") == 1)
            #expect(try await f.log.trackingPosition(of: "other") == 0)
        }
    }

    @Test("a tracking position not beyond the recorded one is refused and writes nothing, even for a retry of the same events", arguments: Backend.allCases)
    func refusesHandledPositions(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            // Given a processor that recorded position 2 with an event of a given id
            _ = try await f.log.append(to: "orders-1", events: [event("A"), event("B")])
            let reaction = [StreamAppend(stream: "mails-1", events: [NewEvent(id: SequentialIDs.id(100), type: "MailDue", data: Data("{}".utf8))])]
            _ = try await f.log.append(reaction, tracking: TrackingPosition(name: "mailer", position: 2))
            let head = try await f.log.headPosition()
            // When it appends again at the same position (the very same events), or at an earlier one
            for position: UInt64 in [2, 1] {
                let error = await #expect(throws: EventStoreError.self) {
                    try await f.log.append(reaction, tracking: TrackingPosition(name: "mailer", position: position))
                }
                // Then each is refused as already processed, naming the recorded position, and nothing is written
                #expect(error?.code == .alreadyProcessed)
                #expect(error?.message.contains("already recorded position 2") == true)
            }
            let empty = await #expect(throws: EventStoreError.self) {
                try await f.log.append([], tracking: TrackingPosition(name: "mailer", position: 2))
            }
            #expect(empty?.code == .alreadyProcessed)
            #expect(try await f.log.headPosition() == head)
            #expect(try await f.log.trackingPosition(of: "mailer") == 2)
        }
    }

    @Test("a version conflict of a tracked append records no tracking position", arguments: Backend.allCases)
    func conflictRecordsNothing(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "orders-1", events: [event("A")])
            let error = await #expect(throws: EventStoreError.self) {
                try await f.log.append(
                    [StreamAppend(stream: "orders-1", events: [event("B")], expectedVersion: .noStream)],
                    tracking: TrackingPosition(name: "mailer", position: 1))
            }
            #expect(error?.code == .versionConflict)
            #expect(try await f.log.trackingPosition(of: "mailer") == 0)
            #expect(try await f.log.headPosition() == 1)
        }
    }

    @Test("a tracked append with no events moves the position on; a bad name or position 0 is refused", arguments: Backend.allCases)
    func emptyAppendsAndBadInput(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "orders-1", events: [event("A")])
            #expect(try await f.log.append([], tracking: TrackingPosition(name: "mailer", position: 1)) == [])
            #expect(try await f.log.trackingPosition(of: "mailer") == 1)
            #expect(try await f.log.headPosition() == 1)
            for bad in [TrackingPosition(name: "", position: 3), TrackingPosition(name: "mailer", position: 0)] {
                let error = await #expect(throws: EventStoreError.self) { try await f.log.append([], tracking: bad) }
                #expect(error?.code == .invalidInput)
            }
            #expect(try await f.log.trackingPosition(of: "mailer") == 1)
        }
    }

    @Test("a tracking position beyond the head is refused: a processor handles events that exist", arguments: Backend.allCases)
    func beyondTheHead(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "orders-1", events: [event("A")])
            for appends in [[], [StreamAppend(stream: "mails-1", events: [event("MailDue")])]] {
                let error = await #expect(throws: EventStoreError.self) {
                    try await f.log.append(appends, tracking: TrackingPosition(name: "mailer", position: 2))
                }
                #expect(error?.code == .invalidInput)
                #expect(error?.message == "The tracking position 2 of 'mailer' is beyond the head of the log (1): a processor records the position of an event it handled; nothing was written.")
            }
            #expect(try await f.log.headPosition() == 1)
            #expect(try await f.log.trackingPosition(of: "mailer") == 0)
        }
    }

    @Test("two racing appends of the same tracking position: exactly one commits", arguments: Backend.allCases)
    func racingAppends(_ backend: Backend) async throws {
        try await withLog(backend) { f in
            _ = try await f.log.append(to: "orders-1", events: [event("A")])
            let log = f.log
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await log.append(
                                [StreamAppend(stream: "mails-\(n)", events: [event("MailDue")])], tracking: TrackingPosition(name: "mailer", position: 1))
                            return true
                        } catch EventStoreError.Code.alreadyProcessed {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
            #expect(try await f.log.headPosition() == 2)
        }
    }
}
