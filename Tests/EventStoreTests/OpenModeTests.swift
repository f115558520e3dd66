import CLMDB
import EventStore
import Foundation
import Testing
import TestSupport

/// Opening only an existing store, or reading one without ever writing to it.
@Suite("Open modes")
struct OpenModeTests {
    @Test("a path without a store is not found, and nothing is created, unless the mode creates")
    func missingStore() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.appending("missing")
        let empty = directory.appending("empty")
        let other = directory.appending("other")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: other + "/notes.txt", contents: Data("keep".utf8))
        for mode in [OpenMode.existing, .readOnly] {
            for path in [missing, empty, other] {
                let error = #expect(throws: EventStoreError.self, "\(mode) \(path)") { try EventStore(path: path, mode: mode) }
                #expect(error?.code == .notFound)
                #expect(error?.message == "There is no event store at '\(path)'.")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["empty", "other"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: other) == ["notes.txt"])
    }

    @Test("read-only: reads work, writes are refused, and the data file keeps every byte")
    func readOnlyStore() async throws {
        let f = try StoreFixture()
        _ = try await f.store.append(to: "s", events: [event("A", #"{"n":1}"#), event("B")])
        try await f.store.openTables(["notes"])
        _ = try await f.store.writeTables { try await $0.put("notes", [1], [2]) }
        let written = try f.store.read(limit: .max)
        await f.store.close()
        let dataFile = f.path + "/data.mdb"
        let before = try Data(contentsOf: URL(fileURLWithPath: dataFile))

        let store = try EventStore(path: f.path, mode: .readOnly)
        #expect(store.mode == .readOnly)
        #expect(try store.read(limit: .max) == written)
        #expect(try store.readStream("s").count == 2)
        #expect(try store.statistics().eventCount == 2)
        #expect(try store.verify().isClean)
        try await store.openTables(["notes", "never-made"])
        #expect(try await store.readTables { try await $0.get("notes", [1]) } == [2])
        #expect(try await store.readTables { try await $0.get("never-made", [1]) } == nil)
        #expect(try await store.readTables { try await $0.count("never-made") } == 0)
        var collected: [RecordedEvent] = []
        for try await event in store.subscribe(from: .start) {
            collected.append(event)
            if collected.count == 2 { break }
        }
        #expect(collected == written)
        let append = await #expect(throws: EventStoreError.self) { try await store.append(to: "s", events: [event("C")]) }
        #expect(append?.code == .storeUnavailable)
        #expect(append?.message == "The store at '\(f.path)' is open read-only; open it for writing to change it.")
        let write = await #expect(throws: EventStoreError.self) { try await store.writeTables { try await $0.put("notes", [1], [3]) } }
        #expect(write?.code == .storeUnavailable)
        await store.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: dataFile)) == before)
    }

    @Test("read-only on an LMDB environment that is not an event store, empty or not, changes no byte of it")
    func foreignEnvironments() throws {
        let directory = try TemporaryDirectory()
        for (name, content) in [("empty-env", nil), ("foreign-env", "someone-else")] as [(String, String?)] {
            let path = directory.appending(name)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            RawWrite.update(path) { raw in
                if let content { raw.put(raw.dbi(nil), Array(content.utf8), Array("data".utf8)) }
            }
            let before = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
            let error = #expect(throws: EventStoreError.self, "\(name)") { try EventStore(path: path, mode: .readOnly) }
            #expect(error?.code == (content == nil ? .notFound : .storeUnavailable), "\(name)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")) == before, "\(name) changed")
        }
    }

    @Test("an empty data file is damage in every mode, and stays empty")
    func emptyDataFile() throws {
        let directory = try TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: directory.appending("data.mdb"), contents: Data())
        for mode in [OpenMode.createIfMissing, .existing, .readOnly] {
            let error = #expect(throws: EventStoreError.self, "\(mode)") { try EventStore(path: directory.path, mode: mode) }
            #expect(error?.code == .damaged)
            #expect(error?.message.contains("is empty (a crash during a copy leaves one)") == true)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.appending("data.mdb"))).isEmpty)
    }
}
