import CLMDB
import EventStore
import Foundation
import Testing
import TestSupport

/// A store written before records carried checksums (format 1) is read as it is, upgraded by
/// its first write, and never changed by a read-only open; a store of a newer format is refused.
@Suite("Store formats")
struct FormatUpgradeTests {
    /// Turns a closed store of format 2 into one of format 1: records without their checksum,
    /// format byte 1, and `meta` saying 1, as the previous version wrote them.
    static func downgrade(_ path: String) {
        RawWrite.update(path) { raw in
            let events = raw.dbi("events")
            for (key, value) in raw.entries(events) {
                var record = value
                record.removeLast(4)
                record[0] = 1
                raw.put(events, key, record)
            }
            raw.put(raw.dbi("meta"), Array("format".utf8), [0, 0, 0, 1])
        }
    }

    static func format(_ path: String) throws -> [UInt8]? {
        let raw = try RawLMDB(path: path)
        defer { raw.close() }
        return try raw.get("meta", Array("format".utf8))
    }

    @Test("a format-1 store reads as it is, unchecked; its first write marks it format 2; old and new records read alike")
    func upgradeByFirstWrite() async throws {
        // Given a store of format 1 with three events
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.path)
        _ = try await store.append(to: "s", events: [event("A", #"{"n":1}"#), event("B"), event("C")])
        let written = try store.read(limit: .max)
        await store.close()
        Self.downgrade(directory.path)
        let dataFile = directory.appending("data.mdb")
        let bytesBefore = try Data(contentsOf: URL(fileURLWithPath: dataFile))

        // When it is opened read-only and read, then it reads the same and nothing changes
        let readOnly = try EventStore(path: directory.path, mode: .readOnly)
        #expect(try readOnly.read(limit: .max) == written)
        let report = try readOnly.verify()
        #expect(report.isClean && report.uncheckedRecords == 3)
        await readOnly.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: dataFile)) == bytesBefore)
        #expect(try Self.format(directory.path) == [0, 0, 0, 1])

        // When it is opened for writing and written, then it says format 2, and both kinds read
        let writable = try EventStore(path: directory.path)
        #expect(try Self.format(directory.path) == [0, 0, 0, 1], "opening alone must not upgrade")
        _ = try await writable.append(to: "s", events: [event("D")])
        #expect(try writable.read(limit: .max).prefix(3).elementsEqual(written))
        #expect(try writable.readStream("s").map(\.type) == ["A", "B", "C", "D"])
        let after = try writable.verify()
        #expect(after.isClean && after.uncheckedRecords == 3 && after.events == 4)
        await writable.close()
        #expect(try Self.format(directory.path) == [0, 0, 0, 2])
        let raw = try RawLMDB(path: directory.path)
        defer { raw.close() }
        #expect(try raw.get("events", bytes(of: 3))?.first == 1)
        #expect(try raw.get("events", bytes(of: 4))?.first == 2)
    }

    @Test("a store of a newer format is refused with a sentence naming both formats, and left as it was")
    func newerFormatRefused() async throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.path)
        _ = try await store.append(to: "s", events: [event("A")])
        await store.close()
        RawWrite.update(directory.path) { raw in raw.put(raw.dbi("meta"), Array("format".utf8), [0, 0, 0, 5]) }
        for mode in [OpenMode.createIfMissing, .existing, .readOnly] {
            let error = #expect(throws: EventStoreError.self) { try EventStore(path: directory.path, mode: mode) }
            #expect(error?.code == .storeUnavailable)
            #expect(error?.message.contains("has format 5, and this version reads formats 1 to 4; use a newer version of esctl") == true)
        }
        #expect(try Self.format(directory.path) == [0, 0, 0, 5])
    }
}
