import EventStore
import Foundation
import Synchronization

/// A store whose next table writes fail, as a full disk or a cut connection makes them fail,
/// and then pass again: everything else is the wrapped store's. For the tests of what heals by
/// itself (the live projections' retries), on every backend, without filling a disk.
final class FailingWritesLog: EventLog {
    let base: any EventLog
    private let failuresLeft = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    private let failureCode = Mutex(EventStoreError.Code.storageFull)
    private let failureText = Mutex("injected: the disk is full")
    private let answersToLose = Atomic<Int>(0)

    init(_ base: any EventLog) { self.base = base }

    /// Makes the next `count` table writes throw `code` (``EventStoreError/Code/storageFull``,
    /// a full disk; ``EventStoreError/Code/storeUnavailable``, a failover under way).
    func failNextWrites(_ count: Int, code: EventStoreError.Code = .storageFull) {
        failureCode.withLock { $0 = code }
        failureText.withLock { $0 = code == .storageFull ? "injected: the disk is full" : "injected: the store is unreachable" }
        failuresLeft.store(count, ordering: .sequentiallyConsistent)
    }

    /// Makes the next `count` table writes commit and then throw
    /// ``EventStoreError/Code/storeUnavailable``, as a connection lost after COMMIT makes them.
    func loseNextAnswers(_ count: Int) { answersToLose.store(count, ordering: .sequentiallyConsistent) }

    /// How many table writes failed so far.
    var failedWrites: Int { failed.load(ordering: .sequentiallyConsistent) }

    var location: String { base.location }
    var configuration: StoreConfiguration { base.configuration }
    var mode: OpenMode { base.mode }
    var writerStatistics: WriterStatistics { base.writerStatistics }
    var ownerID: Int64 { get async throws { try await base.ownerID } }
    var takenOwnerID: Int64? { base.takenOwnerID }

    func writeTables<T: Sendable>(_ body: @escaping @Sendable (TableTransaction) async throws -> T) async throws -> T {
        let left = failuresLeft.wrappingSubtract(1, ordering: .sequentiallyConsistent).oldValue
        if left > 0 {
            failed.wrappingAdd(1, ordering: .sequentiallyConsistent)
            throw EventStoreError(failureCode.withLock { $0 }, "A table write failed (\(failureText.withLock { $0 })).")
        }
        failuresLeft.store(0, ordering: .sequentiallyConsistent)
        let result = try await base.writeTables(body)
        if answersToLose.wrappingSubtract(1, ordering: .sequentiallyConsistent).oldValue > 0 {
            failed.wrappingAdd(1, ordering: .sequentiallyConsistent)
            throw EventStoreError(.storeUnavailable, "A table write committed and its answer was lost (injected).")
        }
        answersToLose.store(0, ordering: .sequentiallyConsistent)
        return result
    }

    func append(_ appends: [StreamAppend]) async throws -> [AppendResult] { try await base.append(appends) }
    func append(_ appends: [StreamAppend], condition: AppendCondition) async throws -> [AppendResult] {
        try await base.append(appends, condition: condition)
    }
    func read(_ query: EventQuery, after: UInt64, limit: Int) async throws -> QueryResult {
        try await base.read(query, after: after, limit: limit)
    }
    func lastEvent(matching query: EventQuery, through: UInt64) async throws -> RecordedEvent? {
        try await base.lastEvent(matching: query, through: through)
    }
    func append(_ appends: [StreamAppend], tracking: TrackingPosition) async throws -> [AppendResult] {
        try await base.append(appends, tracking: tracking)
    }
    func append(_ appends: [StreamAppend], condition: AppendCondition, tracking: TrackingPosition) async throws -> [AppendResult] {
        try await base.append(appends, condition: condition, tracking: tracking)
    }
    func trackingPosition(of name: String) async throws -> UInt64 { try await base.trackingPosition(of: name) }
    func read(from position: UInt64, through last: UInt64, limit: Int, filter: EventFilter) async throws -> [RecordedEvent] {
        try await base.read(from: position, through: last, limit: limit, filter: filter)
    }
    func readStream(_ stream: String, from version: UInt64?, direction: ReadDirection, limit: Int) async throws -> [RecordedEvent] {
        try await base.readStream(stream, from: version, direction: direction, limit: limit)
    }
    func event(at position: UInt64) async throws -> RecordedEvent? { try await base.event(at: position) }
    func event(withID id: UUID) async throws -> RecordedEvent? { try await base.event(withID: id) }
    func headPosition() async throws -> UInt64 { try await base.headPosition() }
    func streamVersion(_ stream: String) async throws -> UInt64 { try await base.streamVersion(stream) }
    func deleteStream(_ stream: String, expectedVersion: ExpectedVersion, hard: Bool) async throws -> StreamDeletion {
        try await base.deleteStream(stream, expectedVersion: expectedVersion, hard: hard)
    }
    func setRetention(_ policy: RetentionPolicy, for stream: String) async throws { try await base.setRetention(policy, for: stream) }
    func purge() async throws -> [StreamDeletion] { try await base.purge() }
    func streamInfo(_ stream: String) async throws -> StreamInfo? { try await base.streamInfo(stream) }
    func statistics() async throws -> StoreStatistics { try await base.statistics() }
    func verify() async throws -> VerificationReport { try await base.verify() }
    func events(from position: UInt64, through last: UInt64, filter: EventFilter, pageSize: Int) -> LogEvents {
        base.events(from: position, through: last, filter: filter, pageSize: pageSize)
    }
    func subscribe(from start: SubscriptionStart, filter: EventFilter) -> Subscription { base.subscribe(from: start, filter: filter) }
    func close() async { await base.close() }
    func openTables(_ names: [String]) async throws { try await base.openTables(names) }
    func existingTables(_ names: [String]) async throws -> [String] { try await base.existingTables(names) }
    func readTables<T: Sendable>(_ body: (TableTransaction) async throws -> T) async throws -> T { try await base.readTables(body) }
    func append(
        _ appends: [StreamAppend], alsoWriting body: @escaping @Sendable (TableTransaction, [AppendResult]) async throws -> Void
    ) async throws -> [AppendResult] {
        try await base.append(appends, alsoWriting: body)
    }
    func waitForCommit(after position: UInt64) async throws -> UInt64 { try await base.waitForCommit(after: position) }
    func isOwnerAlive(_ owner: Int64) async throws -> Bool { try await base.isOwnerAlive(owner) }
}
