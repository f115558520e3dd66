@testable import EventStoreCore
@testable import EventStoreLMDB
import Foundation
import Testing
import TestSupport

@Suite("Tracking positions")
struct TrackingTests {
    // The behaviour of tracking positions runs on every backend in
    // ConformanceTests/TrackingConformanceTests.swift; the writer's commit count is LMDB's.
    @Test("an append with a tracking position records it with the events, in one transaction")
    func recordsWithEvents() async throws {
        // Given a store with one event a processor reacts to
        let f = try StoreFixture()
        _ = try await f.store.append(to: "orders-1", events: [event("OrderPlaced")])
        #expect(try await f.store.trackingPosition(of: "mailer") == 0)
        let commits = f.store.writerStatistics.commits
        // When the processor appends its reaction with the position handled
        let results = try await f.store.append(
            [StreamAppend(stream: "mails-1", events: [event("MailDue")])], tracking: TrackingPosition(name: "mailer", position: 1))
        // Then both are recorded, by one commit
        #expect(results.map(\.positions) == [[2]])
        #expect(try await f.store.trackingPosition(of: "mailer") == 1)
        #expect(f.store.writerStatistics.commits == commits + 1)
    }
}
