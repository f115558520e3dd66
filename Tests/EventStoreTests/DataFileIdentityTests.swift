import EventStore
import Foundation
import Testing
import TestSupport

/// A store whose data file is deleted or replaced while open refuses writes instead of
/// acknowledging appends that no later open would read.
@Suite("The data file's identity")
struct DataFileIdentityTests {
    @Test("a store whose directory is deleted while open refuses appends with storeUnavailable, logged once at error")
    func deletedDirectory() async throws {
        // Given an open store that took an append
        let directory = try TemporaryDirectory()
        let path = directory.appending("store")
        let captured = LogCapture()
        let store = try EventStore(path: path, configuration: StoreConfiguration(durability: .noSync, logger: captured.logger))
        defer { store.close() }
        _ = try await store.append(to: "s", events: [event("A")])
        // When its directory is removed, as `rm -rf` would
        try FileManager.default.removeItem(atPath: path)
        // Then every later append is refused with one sentence, and the refusal is logged once
        for _ in 0..<2 {
            let error = await #expect(throws: EventStoreError.self) { try await store.append(to: "s", events: [event("B")]) }
            #expect(error?.code == .storeUnavailable)
            #expect(error?.message.contains("was deleted while it was open") == true, "\(error?.message ?? "")")
        }
        #expect(captured.messages(.error) == ["refusing writes: the data file was deleted or replaced while open"])
        // And reads still answer from the open file
        #expect(try store.read(limit: 10).map(\.type) == ["A"])
    }

    @Test("a store whose data file is replaced at its path while open (a restore copied over it) refuses appends; the copy is untouched")
    func replacedDataFile() async throws {
        // Given an open store with one event, and a copy of its data file
        let directory = try TemporaryDirectory()
        let path = directory.appending("store")
        let store = try EventStore(path: path, configuration: StoreConfiguration(durability: .noSync))
        _ = try await store.append(to: "s", events: [event("A")])
        let dataFile = path + "/data.mdb"
        let copy = directory.appending("copy.mdb")
        try FileManager.default.copyItem(atPath: dataFile, toPath: copy)
        // When the copy is moved over the data file while the store is open
        #expect(rename(copy, dataFile) == 0)
        // Then appends are refused, and the file now at the path still holds one event
        let error = await #expect(throws: EventStoreError.self) { try await store.append(to: "s", events: [event("B")]) }
        #expect(error?.code == .storeUnavailable)
        #expect(error?.message.contains("was replaced while it was open") == true, "\(error?.message ?? "")")
        await store.close()
        let reopened = try EventStore(path: path, mode: .existing, configuration: StoreConfiguration(durability: .noSync))
        defer { reopened.close() }
        #expect(try reopened.read(limit: 10).map(\.type) == ["A"])
    }
}
