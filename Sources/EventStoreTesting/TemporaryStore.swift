import EventStore
import Foundation
import Testing

/// Stores for tests: each in a fresh temporary directory, closed and removed when the test is
/// done, with recorded times and ids known in advance.
///
/// ```swift
/// @Test(.temporaryStore) func recordsAnItem() async throws {
///     let store = try #require(TemporaryStore.current)
///     let result = try await store.append(to: "todo-home", events: [try ItemAdded(item: "pen").newEvent()])
///     #expect(result.positions == [1])
/// }
/// ```
public enum TemporaryStore {
    /// The store of the running test, given by the ``TemporaryStoreTrait`` (`@Test(.temporaryStore)`)
    /// (nil outside such a test).
    @TaskLocal public static var current: EventStore?

    /// A configuration for tests: no syncing to disk, times from 2026-01-01T00:00:00Z one
    /// second apart per append, and ids 00000000-0000-0000-0000-000000000001, ...002, ...
    public static func deterministicConfiguration(
        start: Date = Date(timeIntervalSince1970: 1_767_225_600), step: TimeInterval = 1
    ) -> StoreConfiguration {
        let clock = SteppingClock(start: start, step: step)
        let ids = SequentialIDs()
        return StoreConfiguration(durability: .noSync, clock: { clock.now() }, idGenerator: { ids.next() })
    }

    /// Runs `body` with a store in a fresh temporary directory, closes it and removes the
    /// directory afterwards (whether `body` returns or throws). Rethrows what `body` throws and
    /// the store's errors opening it.
    public static func with<R>(
        configuration: StoreConfiguration = deterministicConfiguration(), _ body: (EventStore) async throws -> R
    ) async throws -> R {
        let directory = try TemporaryDirectory(prefix: "eventstore-store")
        let store = try EventStore(path: directory.appending("store"), configuration: configuration)
        return try await store.closingAfter { try await body(store) }
    }
}

/// The trait behind `@Test(.temporaryStore)`: the test runs with ``TemporaryStore/current`` set
/// to a fresh store (deterministic times and ids), closed and removed after it.
public struct TemporaryStoreTrait: TestTrait, SuiteTrait, TestScoping {
    let configuration: @Sendable () -> StoreConfiguration

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite's trait applies to each of its tests: scope only the test cases.
        guard testCase != nil else { return try await function() }
        try await TemporaryStore.with(configuration: configuration()) { store in
            try await TemporaryStore.$current.withValue(store) { try await function() }
        }
    }
}

extension Trait where Self == TemporaryStoreTrait {
    /// Runs each test with a fresh store in ``TemporaryStore/current``.
    public static var temporaryStore: Self { TemporaryStoreTrait { TemporaryStore.deterministicConfiguration() } }

    /// Runs each test with a fresh store in ``TemporaryStore/current``, opened with the
    /// configuration `make` returns (called once per test).
    public static func temporaryStore(_ make: @escaping @Sendable () -> StoreConfiguration) -> Self {
        TemporaryStoreTrait(configuration: make)
    }
}
