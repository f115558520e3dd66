@testable import EventStoreCore
@testable import EventStoreLMDB
import Foundation
import Testing
import TestSupport

@Suite("Atomic appends across streams: the LMDB writer's commits")
struct MultiStreamAppendTests {
    // The rest of this test (results, order, positions) runs on every backend in
    // ConformanceTests/MultiStreamAppendConformanceTests.swift; the writer's commit count is LMDB's.
    @Test("one call appends to several streams in one writer commit")
    func appendsToSeveralStreamsInOneCommit() async throws {
        let f = try StoreFixture()
        _ = try await f.store.append(to: "camper-1", events: [event("CamperAdded")])
        let commits = f.store.writerStatistics.commits
        let results = try await f.store.append([
            StreamAppend(stream: "camper-1", events: [event("Reserved")], expectedVersion: .exact(1)),
            StreamAppend(stream: "site-15", events: [event("Booked"), event("Paid")], expectedVersion: .noStream),
        ])
        #expect(results.map(\.positions) == [[2], [3, 4]])
        #expect(f.store.writerStatistics.commits == commits + 1)
    }

    @Test("multi-stream calls share a group commit, and one call's conflict fails that call only")
    func groupCommitOfMultiStreamCalls() async throws {
        let f = try StoreFixture()
        let store = f.store
        let barrier = WriterBarrier()
        try store.writer.submit(barrier)
        try await barrier.waitUntilEntered()
        let commits = store.writerStatistics.commits
        var tasks: [Task<[AppendResult], any Error>] = []
        for call in 0..<8 {
            let expectation: ExpectedVersion = call == 5 ? .exact(99) : .any
            tasks.append(Task {
                try await store.append([
                    StreamAppend(stream: "x", events: [event("X")], expectedVersion: expectation),
                    StreamAppend(stream: "y-\(call)", events: [event("Y")]),
                ])
            })
            try await waitForQueuedJobs(store, call + 1)
        }
        barrier.open()
        var failures = 0
        for (call, task) in tasks.enumerated() {
            do {
                let result = try await task.value
                #expect(call != 5)
                #expect(result.count == 2)
            } catch let error as EventStoreError {
                #expect(call == 5 && error.code == .versionConflict)
                failures += 1
            }
        }
        #expect(failures == 1)
        #expect(store.writerStatistics.commits == commits + 2)
        #expect(try store.headPosition() == 14)
        #expect(try store.streamVersion("y-5") == 0)
    }
}
