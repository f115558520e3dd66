@testable import EventStore
@testable import EventStorePostgres
import EventStoreTesting
import Foundation
import PostgresTestSupport
import Testing

/// A database an earlier version of the program wrote is upgraded in place by a newer one: its
/// history reads the same, appends go on where it stopped, and a read-only open changes nothing.
@Suite("PostgreSQL: upgrading the schema in place")
struct PostgresSchemaUpgradeTests {
    /// Puts the store of `database` back to schema version 1, as that version left it.
    private func downgradeToVersion1(_ database: ThrowawayDatabase) async throws {
        try await database.execute(SchemaVersion1.appendFunction)
        try await database.execute("UPDATE eventstore.schema_version SET version = 1")
    }

    private func schemaVersion(_ database: ThrowawayDatabase) async throws -> [Int64] {
        try await database.integers("SELECT version FROM eventstore.schema_version")
    }

    /// How many append functions have version 2's body (its set-wise writes).
    private func setWiseFunctions(_ database: ThrowawayDatabase) async throws -> [Int64] {
        try await database.integers(
            "SELECT count(*) FROM pg_proc WHERE proname = 'append' AND prosrc LIKE '%The writes, set-wise%'")
    }

    @Test("a version 1 store opened by this program is upgraded to version 2: the same history, appends go on, verify is clean")
    func upgradesVersion1InPlace() async throws {
        try await withLog(.postgres) { f in
            let database = try #require(f.database)
            // Given a store at schema version 1 whose events were written by version 1's function:
            // single appends, a multi-stream call, a retry-able append with given ids
            try await downgradeToVersion1(database)
            #expect(try await setWiseFunctions(database) == [0])
            let first = try await f.log.append(to: "todo-1", events: [event("Added"), event("Added")])
            let given = [UUID(), UUID()]
            let withIDs = try await f.log.append(
                to: "todo-2", events: [event("Added", id: given[0]), event("Done", id: given[1])], expectedVersion: .noStream)
            let multi = try await f.log.append([
                StreamAppend(stream: "todo-1", events: [event("Done")], expectedVersion: .exact(2)),
                StreamAppend(stream: "todo-3", events: [event("Added")]),
            ])
            #expect(first.positions == [1, 2] && withIDs.positions == [3, 4] && multi.flatMap(\.positions) == [5, 6])
            let before = try await f.log.events()
            #expect(before.count == 6)

            // When a read-only handle opens it, then nothing changes: version 1 stays, reads work
            let reader = try await PostgresEventStore(url: database.url, mode: .readOnly)
            #expect(try await reader.events() == before)
            reader.close()
            #expect(try await schemaVersion(database) == [1])

            // When this program opens it to write
            try await f.reopen()

            // Then it is at version 2 with version 2's function, and the history reads the same
            #expect(try await schemaVersion(database) == [2])
            #expect(try await setWiseFunctions(database) == [1])
            #expect(try await f.log.events() == before)
            // and appends go on where version 1 stopped, with versions and positions following
            let next = try await f.log.append(to: "todo-1", events: [event("Added")], expectedVersion: .exact(3))
            #expect(next.positions == [7] && next.version == 4)
            // and a retry of what version 1 wrote is answered with its original positions
            let retry = try await f.log.append(
                to: "todo-2", events: [event("Added", id: given[0]), event("Done", id: given[1])], expectedVersion: .noStream)
            #expect(retry.alreadyRecorded && retry.positions == [3, 4] && retry.version == 2)
            #expect(try await f.log.headPosition() == 7)
            let report = try await f.log.verify()
            #expect(report.isClean, "verify after the upgrade: \(report.problems)")
        }
    }

    @Test("several handles opening a version 1 store at once upgrade it once, and all of them append")
    func concurrentOpensUpgradeOnce() async throws {
        try await withLog(.postgres) { f in
            let database = try #require(f.database)
            // Given a version 1 store with one event
            _ = try await f.log.append(to: "s", events: [event("E")])
            try await downgradeToVersion1(database)
            f.log.close()
            // When four handles open it at once
            let handles = try await withTimeout(.seconds(60), "four handles to open a version 1 store") {
                try await withThrowingTaskGroup(of: PostgresEventStore.self) { group in
                    for _ in 0..<4 { group.addTask { try await PostgresEventStore(url: database.url) } }
                    return try await group.reduce(into: [PostgresEventStore]()) { $0.append($1) }
                }
            }
            // Then the store is at version 2, with one append function, and each handle appends
            #expect(try await schemaVersion(database) == [2])
            #expect(try await setWiseFunctions(database) == [1])
            var positions: [UInt64] = []
            for handle in handles {
                positions += try await handle.append(to: "s", events: [event("E")]).positions
                handle.close()
            }
            #expect(positions.sorted() == [2, 3, 4, 5])
            try await f.reopen()
        }
    }
}
