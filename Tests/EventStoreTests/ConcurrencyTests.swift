@testable import EventStoreCore
@testable import EventStoreLMDB
import Foundation
import Synchronization
import Testing
import TestSupport

/// A writer job that holds the writer thread until released, so tests can let appends queue up
/// behind it and watch them commit together.
final class WriterBarrier: WriteJob, @unchecked Sendable {
    private let release = DispatchSemaphore(value: 0)
    private let entered: AsyncStream<Void>.Continuation
    let enteredSignal: AsyncStream<Void>
    let eventCount = 0

    init() {
        (enteredSignal, entered) = AsyncStream.makeStream()
    }

    func run(in context: inout BatchContext) throws(JobFailure) {
        entered.yield()
        release.wait()
    }

    func complete() {}
    func fail(_ error: EventStoreError) {}

    /// Lets the writer go on.
    func open() { release.signal() }

    /// Waits until the writer is inside the barrier.
    func waitUntilEntered() async throws {
        let signal = enteredSignal
        try await withTimeout(.seconds(10), "the writer to reach the barrier") {
            var iterator = signal.makeAsyncIterator()
            _ = await iterator.next()
        }
    }
}

/// Waits (yielding, never sleeping for a guess) until `count` jobs are queued behind the writer.
func waitForQueuedJobs(_ store: EventStore, _ count: Int) async throws {
    try await withTimeout(.seconds(10), "\(count) appends to queue up behind the writer") {
        while store.writer.queuedJobCount < count {
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}

@Suite("Concurrent appends and group commit")
struct ConcurrencyTests {
    @Test("appends queued while the writer is busy commit together in one transaction")
    func groupCommitBatches() async throws {
        // Given a writer held busy by a barrier
        let f = try StoreFixture(durability: .full)
        let barrier = WriterBarrier()
        try f.store.writer.submit(barrier)
        try await barrier.waitUntilEntered()
        let commitsBefore = f.store.writerStatistics.commits
        // When 64 tasks each append one event while it is busy
        let store = f.store
        let results = Task {
            try await withThrowingTaskGroup(of: AppendResult.self) { group in
                for n in 0..<64 {
                    group.addTask { try await store.append(to: "stream-\(n % 8)", events: [event("E")]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        try await waitForQueuedJobs(store, 64)
        barrier.open()
        let appended = try await withTimeout(.seconds(30), "64 grouped appends to finish") { try await results.value }
        // Then all 64 are committed by one transaction after the barrier's own
        #expect(appended.count == 64)
        #expect(Set(appended.flatMap(\.positions)) == Set(1...64))
        #expect(store.writerStatistics.commits == commitsBefore + 2)
        #expect(try store.headPosition() == 64)
    }

    @Test("in one group commit, one caller's conflict fails that caller only")
    func conflictFailsOnlyItsCaller() async throws {
        let f = try StoreFixture()
        let store = f.store
        let barrier = WriterBarrier()
        try store.writer.submit(barrier)
        try await barrier.waitUntilEntered()
        let commitsBefore = store.writerStatistics.commits
        let first = Task { try await store.append(to: "s", events: [event("A")], expectedVersion: .noStream) }
        try await waitForQueuedJobs(store, 1)
        let second = Task { try await store.append(to: "s", events: [event("B")], expectedVersion: .noStream) }
        try await waitForQueuedJobs(store, 2)
        let third = Task { try await store.append(to: "t", events: [event("C")], expectedVersion: .noStream) }
        try await waitForQueuedJobs(store, 3)
        barrier.open()

        let firstResult = try await first.value
        let secondError = await #expect(throws: EventStoreError.self) { try await second.value }
        let thirdResult = try await third.value
        #expect(firstResult == AppendResult(stream: "s", positions: [1], version: 1, alreadyRecorded: false, ids: [SequentialIDs.id(1)], recordedAtMicroseconds: StoreFixture.micros(ofRead: 1)))
        #expect(secondError?.conflicts == [VersionConflict(stream: "s", expected: .noStream, actual: 1)])
        #expect(thirdResult == AppendResult(stream: "t", positions: [2], version: 1, alreadyRecorded: false, ids: [SequentialIDs.id(3)], recordedAtMicroseconds: StoreFixture.micros(ofRead: 1)))
        #expect(store.writerStatistics.commits == commitsBefore + 2)
        #expect(try store.read(limit: .max).map(\.type) == ["A", "C"])
    }

    @Test("many tasks racing for the same version: exactly one wins")
    func oneWinnerPerVersion() async throws {
        let f = try StoreFixture()
        let store = f.store
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<50 {
                group.addTask {
                    do {
                        _ = try await store.append(to: "s", events: [event("Claim", #"{"n":\#(n)}"#)], expectedVersion: .exact(0))
                        return true
                    } catch let error as EventStoreError where error.code == .versionConflict {
                        #expect(error.conflicts == [VersionConflict(stream: "s", expected: .exact(0), actual: 1)])
                        return false
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
        #expect(try store.streamVersion("s") == 1)
    }

    @Test("tasks that read, then append with the version they read, never lose an update")
    func optimisticLoopsLoseNothing() async throws {
        let f = try StoreFixture()
        let store = f.store
        let tasks = 16
        let perTask = 10
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<tasks {
                group.addTask {
                    var conflicts = 0
                    var done = 0
                    while done < perTask {
                        let version = try store.streamVersion("counter")
                        do {
                            _ = try await store.append(
                                to: "counter", events: [event("Increment", #"{"worker":\#(worker),"n":\#(done)}"#)],
                                expectedVersion: .exact(version))
                            done += 1
                        } catch let error as EventStoreError where error.code == .versionConflict {
                            conflicts += 1
                        }
                    }
                    return conflicts
                }
            }
            _ = try await group.reduce(0, +)
        }
        let events = try store.readStream("counter")
        #expect(events.map(\.version) == (1...UInt64(tasks * perTask)).map { $0 })
        #expect(Set(events.map { String(decoding: $0.data, as: UTF8.self) }).count == tasks * perTask)
    }
}
