@testable import EventStoreCore
@testable import EventStoreLMDB
import Foundation
import Testing
import TestSupport

@Suite("Subscriptions: LMDB's poller and other processes")
struct SubscriptionTests {
    // The subscriptions' behaviour runs on every backend in
    // ConformanceTests/SubscriptionConformanceTests.swift; these two need LMDB's poller and an
    // esctl process (esctl opens store directories only).

    @Test("commits of another process are noticed by polling on the injected clock")
    func pollingOnATestClock() async throws {
        // Given a store here whose poller runs on a test clock, with a subscriber waiting
        let clock = TestClock()
        let directory = try TemporaryDirectory()
        let path = directory.appending("store")
        let store = try EventStore(
            path: path, configuration: StoreConfiguration(durability: .noSync, pollInterval: .seconds(1), pollClock: clock))
        defer { store.close() }
        let collector = EventCollector(store.subscribe(from: .end).withProgress)
        try await collector.expectNothingMore(through: 0)
        try await clock.waitForSleepers(1)
        // When another process appends
        let child = try await ProcessRunner.esctl(["append", "elsewhere", "Happened"], db: path)
        #expect(child.status == 0, "\(child)")
        // Then nothing arrives until the poll interval passes on the clock...
        #expect(collector.received.isEmpty)
        clock.advance(by: .seconds(1))
        // ...and then the event does
        #expect(try await collector.take(1).map(\.stream) == ["elsewhere"])
    }

    @Test("an esctl append in another process reaches a subscriber here")
    func crossProcess() async throws {
        let f = try StoreFixture()
        let collector = EventCollector(f.store.subscribe(from: .end).withProgress)
        try await collector.expectNothingMore(through: 0)
        let child = Task { try await ProcessRunner.esctl(["append", "orders-1", "OrderPlaced", "--data", #"{"total":12}"#], db: f.path) }
        let received = try await collector.take(1, within: .seconds(30))
        #expect(received.map(\.type) == ["OrderPlaced"])
        #expect(received.map { String(decoding: $0.data, as: UTF8.self) } == [#"{"total":12}"#])
        #expect(try await child.value.status == 0)
    }
}
