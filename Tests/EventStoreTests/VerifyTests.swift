import CLMDB
import EventStore
import Foundation
import Testing
import TestSupport

/// verify() finds each kind of damage, precisely, and a clean store is clean.
@Suite("Verify and backup")
struct VerifyTests {
    /// A store with 3 streams, one long enough to have index chunks; closed again.
    func seededStore() async throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.path, configuration: StoreConfiguration(durability: .noSync))
        _ = try await store.append(to: "long", events: (1...35).map { n in NewEvent(type: "T", data: Data("{\"n\":\(n)}".utf8)) })
        for n in 0..<6 {
            _ = try await store.append(to: "s-\(n % 2)", events: [NewEvent(type: "U", data: Data("{}".utf8))])
        }
        await store.close()
        return directory
    }

    func verify(_ directory: TemporaryDirectory) throws -> VerificationReport {
        let store = try EventStore(path: directory.path)
        defer { store.close() }
        return try store.verify()
    }

    /// Changes the raw LMDB databases of a closed store.
    func tamper(_ directory: TemporaryDirectory, _ body: (OpaquePointer, (String) -> MDB_dbi) -> Void) {
        RawWrite.update(directory.path) { raw in body(raw.txn) { raw.dbi($0) } }
    }

    func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8]) {
        RawWrite(txn: txn).put(dbi, key, value)
    }

    func delete(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8]) {
        RawWrite(txn: txn).delete(dbi, key)
    }

    func value(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8]) -> [UInt8]? {
        RawWrite(txn: txn).get(dbi, key)
    }

    func be(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    @Test("looking an event up by id says damaged when the id table and the log disagree")
    func eventByIDOnADamagedStore() async throws {
        // Given three ids of the seeded store, each with its id-table entry spoiled another way
        let directory = try await seededStore()
        let store = try EventStore(path: directory.path)
        let events = try store.read(from: 1, limit: 3)
        await store.close()
        func idKey(_ event: RecordedEvent) -> [UInt8] { withUnsafeBytes(of: event.id.uuid) { Array($0) } }
        tamper(directory) { txn, dbi in
            put(txn, dbi("event_ids"), idKey(events[0]), [1, 2, 3])  // not a position
            put(txn, dbi("event_ids"), idKey(events[1]), be(999))  // no such position
            put(txn, dbi("event_ids"), idKey(events[2]), be(1))  // another record's position
        }
        // When each is looked up, then each is damaged, with what to do
        let reopened = try EventStore(path: directory.path)
        defer { reopened.close() }
        for (event, detail) in zip(events, ["not a position", "position 999, which is not in the log", "a record with another id"]) {
            let error = #expect(throws: EventStoreError.self) { try reopened.event(withID: event.id) }
            #expect(error?.code == .damaged)
            #expect(error?.message.contains(detail) == true && error?.message.contains("esctl verify") == true, "\(String(describing: error))")
        }
    }

    @Test("a store written by the library verifies clean")
    func cleanStore() async throws {
        let directory = try await seededStore()
        let report = try verify(directory)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.events == 41 && report.streams == 3 && report.headPosition == 41)
    }

    @Test("a missing record is a gap, and its stream's versions and index no longer add up")
    func missingRecord() async throws {
        let directory = try await seededStore()
        tamper(directory) { txn, dbi in delete(txn, dbi("events"), be(20)) }
        let report = try verify(directory)
        #expect(report.problems.contains { $0.check == "positions" && $0.detail == "positions 20...20 are missing" })
        #expect(report.problems.contains { $0.check == "versions" })
        #expect(report.problems.contains { $0.check == "streams" && $0.detail.contains("'long' says versions 1...35, the log holds 34") })
        // No deletion explains the hole: the store's own record of deletions counts none
        #expect(report.problems.contains { $0.check == "deletions" && $0.detail == "the store counts 0 deleted events, the log has 1 holes" })
    }

    @Test("a record that does not decode is named by its position")
    func undecodableRecord() async throws {
        let directory = try await seededStore()
        tamper(directory) { txn, dbi in put(txn, dbi("events"), be(7), [1, 0, 0, 9]) }
        let report = try verify(directory)
        // One problem, in the record's own words; no follow-on problems of heads and index that
        // would only blame the same record again under other names.
        #expect(report.problems.map(\.description) == [
            "records: position 7 does not decode: the record at position 7 is not a readable record (its stream cannot be told: the checks of heads and the index allow for it)"
        ])

        // Damage elsewhere is still found beside it: an index entry of another version.
        tamper(directory) { txn, dbi in
            put(txn, dbi("stream_index"), be(1) + be(17), be(99) + (18...32).flatMap { be(UInt64($0)) })
        }
        #expect(try verify(directory).problems.map(\.description) == [
            "records: position 7 does not decode: the record at position 7 is not a readable record (its stream cannot be told: the checks of heads and the index allow for it)",
            "index: version 17 of 'long' points to position 99, the record is at 17",
        ])
    }

    @Test("an index chunk pointing elsewhere, or missing, is found")
    func badIndex() async throws {
        let directory = try await seededStore()
        tamper(directory) { txn, dbi in
            // Stream 1 ("long"): its chunk of versions 17...32 now says position 99 for version 17.
            put(txn, dbi("stream_index"), be(1) + be(17), be(99) + (18...32).flatMap { be(UInt64($0)) })
        }
        let report = try verify(directory)
        #expect(report.problems.map(\.description) == ["index: version 17 of 'long' points to position 99, the record is at 17"])

        let other = try await seededStore()
        tamper(other) { txn, dbi in delete(txn, dbi("stream_index"), be(1) + be(1)) }
        #expect(try verify(other).problems.map(\.description) == ["index: the index holds 1 chunks, the heads need 2: some records are not indexed"])
    }

    @Test("a stream head that disagrees with the log is found")
    func badHead() async throws {
        let directory = try await seededStore()
        tamper(directory) { txn, dbi in put(txn, dbi("streams"), Array("s-0".utf8), be(2) + be(4) + be(37) + be(39) + be(41) + be(99)) }
        let report = try verify(directory)
        #expect(report.problems.contains { $0.detail.contains("the head of 's-0' says versions 1...4, the log holds 3") })
    }

    @Test("the id table must map every record's id to its position, and nothing else")
    func badIDs() async throws {
        let directory = try await seededStore()
        tamper(directory) { txn, dbi in put(txn, dbi("event_ids"), Array(repeating: 0xEE, count: 16), be(3)) }
        #expect(try verify(directory).problems.map(\.description) == ["ids: the id table holds 42 ids for 41 records"])
    }

    @Test("a backup taken while a writer keeps appending opens and verifies clean")
    func backupWhileWriting() async throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.appending("store"), configuration: StoreConfiguration(durability: .noSync))
        let writer = Task {
            for n in 0..<300 {
                _ = try await store.append(to: "s-\(n % 7)", events: [NewEvent(type: "T", data: Data("{\"n\":\(n)}".utf8))])
            }
        }
        var copies: [String] = []
        for n in 0..<5 {
            let destination = directory.appending("backup-\(n)")
            try await store.backup(to: destination, compact: n % 2 == 1)
            copies.append(destination)
        }
        try await writer.value
        await store.close()
        for copy in copies {
            let restored = try EventStore(path: copy)
            let report = try restored.verify()
            #expect(report.isClean, "\(copy): \(report.problems)")
            #expect(try restored.read(limit: .max).map(\.position) == Array(1...max(report.headPosition, 1)).prefix(Int(report.headPosition)).map { $0 })
            await restored.close()
        }
        let occupied = directory.appending("backup-0")
        let reopened = try EventStore(path: directory.appending("store"))
        defer { reopened.close() }
        let error = await #expect(throws: EventStoreError.self) { try await reopened.backup(to: occupied) }
        #expect(error?.code == .invalidInput)
        let orphan = directory.appending("no/such/parent")
        let missing = await #expect(throws: EventStoreError.self) { try await reopened.backup(to: orphan) }
        #expect(missing?.code == .invalidInput)
        #expect(!FileManager.default.fileExists(atPath: directory.appending("no")))
    }
}
