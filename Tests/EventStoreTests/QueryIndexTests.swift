import CLMDB
@testable import EventStoreCore
@testable import EventStoreLMDB
import EventStoreTesting
import Foundation
import Testing
import TestSupport

/// What only LMDB shows of conditional appends and the query indexes: appends grouped in one
/// transaction see each other, a store written before the indexes gains them, verify checks them.
@Suite("LMDB: query indexes and conditional appends in one write transaction")
struct QueryIndexTests {
    func tagged(_ type: String, _ tags: [String]) -> NewEvent { NewEvent(type: type, data: Data("{}".utf8), tags: tags) }

    @Test("two conditional appends committed in one transaction: the second sees the first and fails, naming its position")
    func conflictInsideOneBatch() async throws {
        // Given a writer held busy, so that the next appends queue up and commit together
        let f = try StoreFixture(durability: .full)
        let barrier = WriterBarrier()
        try f.store.writer.submit(barrier)
        try await barrier.waitUntilEntered()
        let commitsBefore = f.store.writerStatistics.commits
        let store = f.store
        let condition = AppendCondition(failIfEventsMatch: EventQuery(tags: ["site:15"]), after: 0)
        // When two appends on the same condition queue behind it
        let first = Task { try await store.append([StreamAppend(stream: "a", events: [tagged("Reserved", ["site:15"])])], condition: condition) }
        try await waitForQueuedJobs(store, 1)
        let second = Task { try await store.append([StreamAppend(stream: "b", events: [tagged("Reserved", ["site:15"])])], condition: condition) }
        try await waitForQueuedJobs(store, 2)
        barrier.open()
        // Then the first commits, and the second fails on the event the first wrote in the same batch
        let firstResult = try await withTimeout(.seconds(30), "the first conditional append to commit") { try await first.value }
        #expect(firstResult[0].positions == [1])
        let error = await #expect(throws: EventStoreError.self) {
            _ = try await withTimeout(.seconds(30), "the second conditional append to fail") { try await second.value }
        }
        #expect(error?.code == .conditionFailed && error?.position == 1)
        #expect(f.store.writerStatistics.commits == commitsBefore + 2, "the barrier's transaction, then one for both")
        #expect(try store.headPosition() == 1)
    }

    @Test("a store written before the indexes gains them at its first open for writing, format 4; a read-only open changes nothing and still answers")
    func indexesBuiltAtOpen() async throws {
        // Given a store of format 3 without the indexes, as the previous version left it
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.path)
        _ = try await store.append(to: "s", events: [tagged("A", []), tagged("B", []), tagged("A", [])])
        await store.close()
        RawWrite.update(directory.path) { raw in
            raw.drop(Schema.tagIndex)
            raw.drop(Schema.typeIndex)
            raw.put(raw.dbi("meta"), Array("format".utf8), [0, 0, 0, 3])
        }
        // When it is opened read-only, then queries read the log itself and nothing changes
        let reader = try EventStore(path: directory.path, mode: .readOnly)
        #expect(try reader.read(EventQuery(types: ["A"]), after: 0, limit: 10).events.map(\.position) == [1, 3])
        #expect(try reader.lastEvent(matching: EventQuery(types: ["A"]))?.position == 3)
        await reader.close()
        #expect(try FormatUpgradeTests.format(directory.path) == [0, 0, 0, 3])
        // When it is opened for writing, then it has both indexes, format 4, and the old events indexed
        let writer = try EventStore(path: directory.path)
        defer { writer.close() }
        #expect(try FormatUpgradeTests.format(directory.path) == [0, 0, 0, 4])
        #expect(try writer.read(EventQuery(types: ["A"]), after: 0, limit: 10).events.map(\.position) == [1, 3])
        _ = try await writer.append(to: "s", events: [tagged("A", ["x"])])
        #expect(try writer.read(EventQuery(types: ["A"], tags: ["x"]), after: 0, limit: 10).events.map(\.position) == [4])
        let report = try writer.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    @Test("verify finds an index entry whose record lacks the tag, and a record whose type is not indexed")
    func verifyChecksIndexes() async throws {
        // Given a store with tagged events
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.path)
        _ = try await store.append(to: "s", events: [tagged("A", ["x"]), tagged("B", [])])
        await store.close()
        // When an index entry is added that no record backs, and one is removed
        RawWrite.update(directory.path) { raw in
            var tags: MDB_dbi = 0
            var types: MDB_dbi = 0
            #expect(mdb_dbi_open(raw.txn, Schema.tagIndex, UInt32(MDB_DUPSORT | MDB_DUPFIXED), &tags) == 0)
            #expect(mdb_dbi_open(raw.txn, Schema.typeIndex, UInt32(MDB_DUPSORT | MDB_DUPFIXED), &types) == 0)
            raw.put(tags, Array("y".utf8), [0, 0, 0, 0, 0, 0, 0, 2])
            raw.delete(types, Array("B".utf8))
        }
        // Then verify names both
        let reopened = try EventStore(path: directory.path)
        defer { reopened.close() }
        let report = try reopened.verify()
        let details = report.problems.map(\.detail)
        #expect(details.contains("the tag index lists position 2 under 'y', which that record does not have"), "\(details)")
        #expect(details.contains("the type index holds 1 entries, the records need 2"), "\(details)")
    }
}
