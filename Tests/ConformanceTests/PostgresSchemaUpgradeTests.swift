@testable import EventStoreCore
@testable import EventStoreLMDB
@testable import EventStorePostgres
import EventStoreTesting
import Foundation
import PostgresTestSupport
import Testing

/// A database an earlier version of the program wrote is upgraded in place by a newer one: its
/// history reads the same, appends go on where it stopped, and a read-only open changes nothing.
@Suite("PostgreSQL: upgrading the schema in place")
struct PostgresSchemaUpgradeTests {
    /// Puts the store of `database` back to schema version 1 to 5, as that version left it:
    /// without binary data (before 6), without tags (before 5), without deletion's columns and
    /// tables (before 4), without schema versions in the events table (before 3), with that
    /// version's append function only.
    private func downgrade(_ database: ThrowawayDatabase, to version: Int) async throws {
        try await database.execute(
            """
            DROP FUNCTION eventstore.append(integer[], integer[], text[], bigint[], bigint[], text[], bigint[], integer[], integer[],
                uuid[], boolean[], text[], bytea[], bytea[], bigint[], integer[], integer[], integer[], integer[], text[],
                boolean[], boolean[], bigint)
            """)
        try await database.execute("ALTER TABLE eventstore.events DROP COLUMN binary_data")
        if version == 5 {
            try await database.execute(SchemaVersion5.appendFunction)
            try await database.execute("UPDATE eventstore.schema_version SET version = 5")
            return
        }
        try await database.execute("DROP TABLE eventstore.event_tags")
        try await database.execute("ALTER TABLE eventstore.events DROP COLUMN tags")
        if version == 4 {
            try await database.execute(SchemaVersion4.appendFunction)
            try await database.execute("UPDATE eventstore.schema_version SET version = 4")
            return
        }
        try await database.execute("ALTER TABLE eventstore.head DROP COLUMN deleted")
        try await database.execute(
            """
            ALTER TABLE eventstore.streams DROP COLUMN first_version, DROP COLUMN tombstoned, DROP COLUMN max_count,
                DROP COLUMN max_age_micros, DROP COLUMN truncate_before
            """)
        try await database.execute("DROP TABLE eventstore.deleted_ids, eventstore.deleted_types")
        if version < 3 { try await database.execute("ALTER TABLE eventstore.events DROP COLUMN schema_version") }
        let function = [1: SchemaVersion1.appendFunction, 2: SchemaVersion2.appendFunction][version] ?? SchemaVersion3.appendFunction
        try await database.execute(function)
        try await database.execute("UPDATE eventstore.schema_version SET version = \(version)")
    }

    private func downgradeToVersion1(_ database: ThrowawayDatabase) async throws {
        try await downgrade(database, to: 1)
    }

    /// How many append functions there are, and whether the events table has schema versions.
    private func functionsAndColumn(_ database: ThrowawayDatabase) async throws -> [Int64] {
        try await database.integers(
            """
            SELECT (SELECT count(*) FROM pg_proc WHERE proname = 'append')
                 + 10 * (SELECT count(*) FROM information_schema.columns
                         WHERE table_schema = 'eventstore' AND table_name = 'events' AND column_name = 'schema_version')
            """)
    }

    private func schemaVersion(_ database: ThrowawayDatabase) async throws -> [Int64] {
        try await database.integers("SELECT version FROM eventstore.schema_version")
    }

    /// How many append functions have version 2's body (its set-wise writes).
    private func setWiseFunctions(_ database: ThrowawayDatabase) async throws -> [Int64] {
        try await database.integers(
            "SELECT count(*) FROM pg_proc WHERE proname = 'append' AND prosrc LIKE '%The writes, set-wise%'")
    }

    @Test("a version 1 store opened by this program is upgraded to the current version: the same history, appends go on, verify is clean")
    func upgradesVersion1InPlace() async throws {
        try await withLog(.postgres) { f in
            let database = try #require(f.database)
            // Given a store at schema version 1 holding single appends, a multi-stream call and a
            // retry-able append with given ids (written before it is put back to version 1: this
            // handle speaks the current version's append function)
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
            try await downgradeToVersion1(database)
            #expect(try await setWiseFunctions(database) == [0])

            // When a read-only handle opens it, then nothing changes: version 1 stays, reads work
            let reader = try await PostgresEventStore(url: database.url, mode: .readOnly)
            #expect(try await reader.events() == before)
            await reader.close()
            #expect(try await schemaVersion(database) == [1])

            // When this program opens it to write
            try await f.reopen()

            // Then it is at the current version with one set-wise function and schema versions, and the
            // history reads the same
            #expect(try await schemaVersion(database) == [Int64(PostgresSchema.version)])
            #expect(try await setWiseFunctions(database) == [1])
            #expect(try await functionsAndColumn(database) == [11])
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
            await f.log.close()
            // When four handles open it at once
            let handles = try await withTimeout(.seconds(60), "four handles to open a version 1 store") {
                try await withThrowingTaskGroup(of: PostgresEventStore.self) { group in
                    for _ in 0..<4 { group.addTask { try await PostgresEventStore(url: database.url) } }
                    return try await group.reduce(into: [PostgresEventStore]()) { $0.append($1) }
                }
            }
            // Then the store is at the current version, with one append function, and each handle appends
            #expect(try await schemaVersion(database) == [Int64(PostgresSchema.version)])
            #expect(try await setWiseFunctions(database) == [1])
            var positions: [UInt64] = []
            for handle in handles {
                positions += try await handle.append(to: "s", events: [event("E")]).positions
                await handle.close()
            }
            #expect(positions.sorted() == [2, 3, 4, 5])
            try await f.reopen()
        }
    }

    @Test("a version 2 store gains schema versions: its events read as version 1, verify is clean, later versions append")
    func upgradesVersion2InPlace() async throws {
        try await withLog(.postgres) { f in
            let database = try #require(f.database)
            // Given a store at schema version 2 with events (written before it is put back)
            let given = UUID()
            let first = try await f.log.append(to: "todo-1", events: [event("Added"), event("Done", id: given)])
            #expect(first.positions == [1, 2])
            let before = try await f.log.events()
            try await downgrade(database, to: 2)
            #expect(try await functionsAndColumn(database) == [1])
            // When a read-only handle reads it, then its events have schema version 1 and nothing changes
            let reader = try await PostgresEventStore(url: database.url, mode: .readOnly)
            #expect(try await reader.events() == before)
            let readOnlyReport = try await reader.verify()
            #expect(readOnlyReport.isClean, "verify of a version 2 database, read-only: \(readOnlyReport.problems)")
            await reader.close()
            #expect(try await schemaVersion(database) == [2])

            // When this program opens it to write
            try await f.reopen()

            // Then it is at the current version, its events read the same with schema version 1
            #expect(try await schemaVersion(database) == [Int64(PostgresSchema.version)])
            #expect(try await functionsAndColumn(database) == [11])
            let after = try await f.log.events()
            #expect(after == before)
            #expect(after.map(\.schemaVersion) == [1, 1])
            // and an event of a later schema version appends and reads back with it
            let evolved = try await f.log.append(
                to: "todo-1", events: [NewEvent(type: "Added", data: Data("{}".utf8), schemaVersion: 2)], expectedVersion: .exact(2))
            #expect(evolved.positions == [3])
            #expect(try await f.log.events().last?.schemaVersion == 2)
            // and a retry of what version 2 wrote is still a retry
            let retry = try await f.log.append(to: "todo-1", events: [event("Done", id: given)])
            #expect(retry.alreadyRecorded && retry.positions == [2])
            let report = try await f.log.verify()
            #expect(report.isClean, "verify after the upgrade: \(report.problems)")
        }
    }

    @Test("a version 3 store gains deletion: its history reads the same, verify is clean, and streams delete, retain and tombstone")
    func upgradesVersion3InPlace() async throws {
        try await withLog(.postgres) { f in
            let database = try #require(f.database)
            // Given a store at schema version 3 with events (written before it is put back)
            let given = UUID()
            _ = try await f.log.append(to: "todo-1", events: [event("Added", id: given), event("Done")])
            _ = try await f.log.append(to: "todo-2", events: [event("Added")])
            let before = try await f.log.events()
            try await downgrade(database, to: 3)
            // When a read-only handle reads it, then it reads the same, verify is clean, and nothing changes
            let reader = try await PostgresEventStore(url: database.url, mode: .readOnly)
            #expect(try await reader.events() == before)
            #expect(try await reader.streamInfo("todo-1")?.eventCount == 2)
            let readOnlyReport = try await reader.verify()
            #expect(readOnlyReport.isClean, "verify of a version 3 database, read-only: \(readOnlyReport.problems)")
            #expect(try await reader.statistics().eventCount == 3)
            await reader.close()
            #expect(try await schemaVersion(database) == [3])

            // When this program opens it to write
            try await f.reopen()

            // Then it is at the current version, its events read the same
            #expect(try await schemaVersion(database) == [Int64(PostgresSchema.version)])
            #expect(try await f.log.events() == before)
            // and a stream deletes, its ids stay known, another is tombstoned, and verify is clean
            let deletion = try await f.log.deleteStream("todo-1", expectedVersion: .exact(2), hard: false)
            #expect(deletion.count == 2 && deletion.position == 4)
            let retry = try await f.log.append(to: "todo-1", events: [event("Added", id: given)])
            #expect(retry.alreadyRecorded && retry.deleted && retry.positions == [1])
            _ = try await f.log.deleteStream("todo-2", expectedVersion: .any, hard: true)
            let error = await #expect(throws: EventStoreError.self) {
                _ = try await f.log.append(to: "todo-2", events: [event("Added")])
            }
            #expect(error?.code == .streamTombstoned)
            let report = try await f.log.verify()
            #expect(report.isClean, "verify after the upgrade and deletions: \(report.problems)")
        }
    }

    @Test("a version 4 store gains tags: its history reads the same, verify is clean, and tagged events are queried and guarded")
    func upgradesVersion4InPlace() async throws {
        try await withLog(.postgres) { f in
            let database = try #require(f.database)
            // Given a store at schema version 4 with events (written before it is put back)
            _ = try await f.log.append(to: "todo-1", events: [event("Added"), event("Done")])
            let before = try await f.log.events()
            try await downgrade(database, to: 4)
            // When a read-only handle reads it, then it reads the same (no tags) and nothing changes
            let reader = try await PostgresEventStore(url: database.url, mode: .readOnly)
            #expect(try await reader.events() == before)
            #expect(try await reader.read(EventQuery(types: ["Added"]), after: 0, limit: 10).events.map(\.position) == [1])
            #expect(try await reader.read(EventQuery(tags: ["x"]), after: 0, limit: 10).events.isEmpty)
            await reader.close()
            #expect(try await schemaVersion(database) == [4])
            // When this program opens it to write
            try await f.reopen()
            // Then it is at the current version, its events read the same, and tags work
            #expect(try await schemaVersion(database) == [Int64(PostgresSchema.version)])
            #expect(try await f.log.events() == before)
            _ = try await f.log.append(to: "todo-2", events: [NewEvent(type: "Added", tags: ["x"])])
            let error = await #expect(throws: EventStoreError.self) {
                _ = try await f.log.append(
                    [StreamAppend(stream: "todo-3", events: [event("Added")])], condition: AppendCondition(failIfEventsMatch: EventQuery(tags: ["x"])))
            }
            #expect(error?.code == .conditionFailed && error?.position == 3)
            let report = try await f.log.verify()
            #expect(report.isClean, "verify after the upgrade: \(report.problems)")
        }
    }

    @Test("a version 5 store gains binary data and upstream tracking: its history reads the same, verify is clean, and binary events keep their bytes")
    func upgradesVersion5InPlace() async throws {
        try await withLog(.postgres) { f in
            let database = try #require(f.database)
            // Given a store at schema version 5 with JSON events (written before it is put back)
            _ = try await f.log.append(to: "todo-1", events: [event("Added"), event("Done")])
            let before = try await f.log.events()
            try await downgrade(database, to: 5)
            // When a read-only handle reads it, then it reads the same (all JSON) and nothing changes
            let reader = try await PostgresEventStore(url: database.url, mode: .readOnly)
            #expect(try await reader.events() == before)
            #expect(try await reader.verify().isClean)
            await reader.close()
            #expect(try await schemaVersion(database) == [5])

            // When this program opens it to write
            try await f.reopen()

            // Then it is at the current version, its events read the same, binary data keeps
            // its bytes and format, an upstream tracking position beyond the head is recorded,
            // and verify is clean
            #expect(try await schemaVersion(database) == [Int64(PostgresSchema.version)])
            #expect(try await f.log.events() == before)
            let bytes = Data("{ \"a\" : 1 }".utf8)
            _ = try await f.log.append(
                [StreamAppend(stream: "dcb", events: [NewEvent(type: "T", data: bytes, dataFormat: .binary)])],
                tracking: TrackingPosition(name: "upstream", position: 1_000, upstream: true))
            let binary = try #require(try await f.log.event(at: 3))
            #expect(binary.data == bytes && binary.dataFormat == .binary)
            #expect(try await f.log.trackingPosition(of: "upstream") == 1_000)
            let report = try await f.log.verify()
            #expect(report.isClean, "verify after the upgrade and a binary event: \(report.problems)")
        }
    }
}
