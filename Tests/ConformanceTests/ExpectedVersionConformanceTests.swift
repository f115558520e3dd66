import EventStore
import EventStoreTesting
import Foundation
import Testing

@Suite("Expected versions, on every backend")
struct ExpectedVersionConformanceTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let expected: ExpectedVersion
        let existingEvents: Int
        let succeeds: Bool
        var testDescription: String { "\(expected) on a stream with \(existingEvents) events" }
    }

    static let cases: [Case] = [
        Case(expected: .any, existingEvents: 0, succeeds: true),
        Case(expected: .any, existingEvents: 2, succeeds: true),
        Case(expected: .noStream, existingEvents: 0, succeeds: true),
        Case(expected: .noStream, existingEvents: 2, succeeds: false),
        Case(expected: .streamExists, existingEvents: 0, succeeds: false),
        Case(expected: .streamExists, existingEvents: 2, succeeds: true),
        Case(expected: .exact(0), existingEvents: 0, succeeds: true),
        Case(expected: .exact(2), existingEvents: 2, succeeds: true),
        Case(expected: .exact(1), existingEvents: 2, succeeds: false),
        Case(expected: .exact(3), existingEvents: 2, succeeds: false),
    ]

    @Test("an expectation lets the append through or rejects it naming expected and actual", arguments: Backend.allCases, cases)
    func expectation(_ backend: Backend, _ c: Case) async throws {
        try await withLog(backend) { f in
            // Given a stream with some events
            if c.existingEvents > 0 {
                _ = try await f.log.append(to: "s", events: (0..<c.existingEvents).map { _ in event("Old") })
            }
            let before = try await f.log.events()
            // When appending with the expectation
            let attempt: () async throws -> AppendResult = {
                try await f.log.append(to: "s", events: [event("New"), event("New")], expectedVersion: c.expected)
            }
            if c.succeeds {
                // Then the events follow the existing ones
                let result = try await attempt()
                let version = UInt64(c.existingEvents)
                #expect(result == AppendResult(
                    stream: "s", positions: [version + 1, version + 2], version: version + 2, alreadyRecorded: false,
                    ids: [SequentialIDs.id(version + 1), SequentialIDs.id(version + 2)],
                    recordedAtMicroseconds: LogFixture.micros(ofRead: c.existingEvents > 0 ? 1 : 0)))
            } else {
                // Then a conflict that names both versions, and nothing written
                let error = await #expect(throws: EventStoreError.self) { try await attempt() }
                #expect(error?.code == .versionConflict)
                #expect(error?.conflicts == [VersionConflict(stream: "s", expected: c.expected, actual: UInt64(c.existingEvents))])
                #expect(error?.message.contains("\(c.expected)") == true)
                #expect(try await f.log.events() == before)
            }
        }
    }

    // No store: the rules themselves, which both backends apply; runs once.
    @Test("isSatisfied follows the documented rules")
    func isSatisfied() {
        #expect(ExpectedVersion.any.isSatisfied(by: 0) && ExpectedVersion.any.isSatisfied(by: 7))
        #expect(ExpectedVersion.noStream.isSatisfied(by: 0) && !ExpectedVersion.noStream.isSatisfied(by: 1))
        #expect(!ExpectedVersion.streamExists.isSatisfied(by: 0) && ExpectedVersion.streamExists.isSatisfied(by: 1))
        #expect(ExpectedVersion.exact(0).isSatisfied(by: 0) && !ExpectedVersion.exact(0).isSatisfied(by: 1))
    }
}
