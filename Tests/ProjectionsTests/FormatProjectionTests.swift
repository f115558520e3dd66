import Apps
import EventStore
import Foundation
import Projections
import Testing
import TestSupport

/// docs/FORMAT.md's projection example is the bytes on disk.
@Suite("docs/FORMAT.md: projection tables")
struct FormatProjectionTests {
    @Test("the documented rows and hash of count-by-type over the worked example")
    func documentedRows() async throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(
            path: directory.path,
            configuration: StoreConfiguration(
                durability: .noSync, clock: { Date(timeIntervalSince1970: 1_767_225_600) }, idGenerator: { SequentialIDs.id(1) }))
        defer { store.close() }
        _ = try await store.append(
            to: "orders-1",
            events: [NewEvent(type: "OrderPlaced", data: Data(#"{"total":12}"#.utf8), metadata: Data(#"{"by":"ann"}"#.utf8))])
        let runner = try await ProjectionRunner(store: store, projections: [EventCountByType()])
        try await runner.catchUp()

        let document = try Documents.text("docs/FORMAT.md")
        let rows = try #require(Documents.block(named: "projection-rows", in: document)).split(separator: "\n")
        #expect(rows.count == 2)
        for row in rows {
            let parts = row.split(separator: " ", maxSplits: 1)
            let table = String(parts[0])
            let sides = parts[1].components(separatedBy: "->")
            let key = sides[0].split(separator: " ").compactMap { UInt8($0, radix: 16) }
            let value = sides[1].split(separator: " ").compactMap { UInt8($0, radix: 16) }
            let stored = try await store.readTables { txn in try await txn.get(String(table.dropFirst(2)), key) }
            #expect(stored == value, "\(table)")
        }
        let hash = try #require(Documents.block(named: "projection-hash", in: document)).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await runner.storedHash(of: "count-by-type") == hash)
    }
}
