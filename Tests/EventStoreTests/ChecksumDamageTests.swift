import CLMDB
import EventStore
import Foundation
import Testing
import TestSupport

/// Records carry a CRC-32C of their bytes and position: a byte changed on disk, with LMDB itself
/// consistent, is damage named by its position, never data handed out.
extension VerifyTests {
    @Test("a record whose bytes changed on disk is reported by verify and refused by every read, by its position")
    func changedRecordIsDamage() async throws {
        // Given a store whose record at position 3 has one data byte changed through LMDB itself
        let directory = try await seededStore()
        tamper(directory) { txn, dbi in
            var record = value(txn, dbi("events"), bytes(of: 3)) ?? []
            record[record.count - 6] ^= 0x01
            put(txn, dbi("events"), bytes(of: 3), record)
        }
        let store = try EventStore(path: directory.path)
        defer { store.close() }
        // When it is verified, then exactly that record is reported
        let report = try store.verify()
        #expect(report.problems.map(\.description) == [
            "records: position 3 does not decode: the record at position 3 does not match its checksum (its stream cannot be told: the checks of heads and the index allow for it)"
        ])
        // And every read path refuses it with `damaged`, naming the position
        let message = "The record at position 3 does not match its checksum; run `esctl verify --deep` and restore from a backup."
        let reads: [(String, () throws -> Void)] = [
            ("read", { _ = try store.read(limit: .max) }),
            ("readStream", { _ = try store.readStream("long") }),
            ("event(at:)", { _ = try store.event(at: 3) }),
            ("forEachEvent", { try store.forEachEvent(inStream: "long") { _ in } }),
        ]
        for (name, read) in reads {
            let error = #expect(throws: EventStoreError.self, "\(name)") { try read() }
            #expect(error?.code == .damaged, "\(name)")
            #expect(error?.message == message, "\(name)")
        }
        let subscribed = await #expect(throws: EventStoreError.self) {
            for try await _ in store.subscribe(from: .start) {}
        }
        #expect(subscribed?.message == message)
        // The records around it read as they are
        #expect(try store.event(at: 2)?.version == 2)
        #expect(try store.read(from: 4, limit: .max).count == 38)
    }

    @Test("records read under another key (a damaged key) are damage, not events with other positions")
    func swappedKeysAreDamage() async throws {
        // Given positions 2 and 3 swapped: each record is intact, but under the other's key
        let directory = try await seededStore()
        tamper(directory) { txn, dbi in
            let second = value(txn, dbi("events"), bytes(of: 2)) ?? []
            let third = value(txn, dbi("events"), bytes(of: 3)) ?? []
            put(txn, dbi("events"), bytes(of: 2), third)
            put(txn, dbi("events"), bytes(of: 3), second)
        }
        let store = try EventStore(path: directory.path)
        defer { store.close() }
        // Then both are reported and neither is read
        let report = try store.verify()
        let records = report.problems.filter { $0.check == "records" }.map(\.detail)
        #expect(records.count == 2)
        for (detail, position) in zip(records, [2, 3]) {
            #expect(detail.hasPrefix("position \(position) does not decode: the record at position \(position) does not match its checksum"), "\(detail)")
        }
        for position: UInt64 in [2, 3] {
            let error = #expect(throws: EventStoreError.self) { try store.event(at: position) }
            #expect(error?.message.hasPrefix("The record at position \(position) does not match its checksum") == true)
        }
    }
}
