import EventStore
import Foundation
import Logging
import Synchronization
import Testing
import TestSupport

/// The store tells its logger what it cannot throw to a caller.
@Suite("Logging")
struct LoggingTests {
    @Test("a commit slower than the threshold is a warning with its time, jobs and events")
    func slowCommit() async throws {
        let captured = LogCapture()
        let directory = try TemporaryDirectory()
        let store = try EventStore(
            path: directory.appending("store"),
            configuration: StoreConfiguration(durability: .noSync, slowCommitThreshold: .zero, logger: captured.logger))
        defer { store.close() }
        _ = try await store.append(to: "s", events: [event("A"), event("B")])
        #expect(captured.messages(.warning) == ["a commit was slow"])
        let metadata = captured.entries.withLock { $0.first?.metadata ?? [:] }
        #expect(metadata["eventstore.jobs"] == "1" && metadata["eventstore.events"] == "2")
        #expect(metadata["eventstore.seconds"] != nil)
    }

    @Test("commits within the threshold log nothing")
    func quietCommits() async throws {
        let captured = LogCapture()
        let directory = try TemporaryDirectory()
        // (a threshold no commit of one event reaches, however long a loaded machine keeps the
        // writer from a core: the default, 1 s, is not beyond that, so it is checked apart)
        #expect(StoreConfiguration().slowCommitThreshold == .seconds(1))
        let store = try EventStore(
            path: directory.appending("store"),
            configuration: StoreConfiguration(durability: .noSync, slowCommitThreshold: .seconds(600), logger: captured.logger))
        defer { store.close() }
        _ = try await store.append(to: "s", events: [event("A")])
        #expect(captured.entries.withLock { $0.isEmpty })
    }

    @Test("a subscription far behind the head is noticed once, and again when it has caught up")
    func laggingSubscription() async throws {
        let captured = LogCapture()
        let directory = try TemporaryDirectory()
        let store = try EventStore(
            path: directory.appending("store"),
            configuration: StoreConfiguration(durability: .noSync, subscriptionLagNotice: 2, logger: captured.logger))
        defer { store.close() }
        _ = try await store.append(to: "s", events: (0..<600).map { _ in event("A") })
        let collector = EventCollector(store.subscribe(from: .start).withProgress)
        _ = try await collector.take(600)
        try await collector.expectNothingMore(through: 600)
        #expect(captured.messages(.notice) == ["a subscription is far behind the head", "a subscription has caught up"])
    }
}
