import CLMDB
import EventStore
import Foundation
import Testing
import TestSupport

@Suite("Opening a store")
struct OpeningTests {
    @Test("a missing directory is created with mode 0700")
    func createsDirectory() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("new-store")
        let store = try EventStore(path: path)
        defer { store.close() }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        #expect(FileManager.default.fileExists(atPath: path + "/data.mdb"))
    }

    @Test("opening the same directory twice in one process is refused, also through another path")
    func secondOpenIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("store")
        let store = try EventStore(path: path)
        let error = #expect(throws: EventStoreError.self) { try EventStore(path: path) }
        #expect(error?.code == .storeUnavailable)
        try FileManager.default.createSymbolicLink(atPath: directory.appending("link"), withDestinationPath: path)
        let viaLink = #expect(throws: EventStoreError.self) { try EventStore(path: directory.appending("link")) }
        #expect(viaLink?.code == .storeUnavailable)
        store.close()
        let again = try EventStore(path: path)
        again.close()
    }

    @Test("a path that is a file is refused")
    func pathIsAFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("file")
        _ = FileManager.default.createFile(atPath: path, contents: Data("hello".utf8))
        let error = #expect(throws: EventStoreError.self) { try EventStore(path: path) }
        #expect(error?.code == .storeUnavailable)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "hello")
    }

    @Test("a directory holding other files and no store is refused and left alone")
    func foreignDirectory() throws {
        let directory = try TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: directory.appending("notes.txt"), contents: Data("x".utf8))
        let error = #expect(throws: EventStoreError.self) { try EventStore(path: directory.path) }
        #expect(error?.code == .storeUnavailable)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])
    }

    @Test("a data file that is not LMDB is reported as damaged")
    func garbageDataFile() throws {
        let directory = try TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: directory.appending("data.mdb"), contents: Data(repeating: 0x5A, count: 16384))
        let error = #expect(throws: EventStoreError.self) { try EventStore(path: directory.path) }
        #expect(error?.code == .damaged)
    }

    @Test("an LMDB environment that is not an event store is refused")
    func foreignLMDBEnvironment() throws {
        let directory = try TemporaryDirectory()
        RawWrite.update(directory.path) { raw in raw.put(raw.dbi(nil), Array("someone-else".utf8), Array("data".utf8)) }

        let error = #expect(throws: EventStoreError.self) { try EventStore(path: directory.path) }
        #expect(error?.code == .storeUnavailable)
    }

    @Test("a truncated data file is reported as damaged instead of crashing")
    func truncatedDataFile() async throws {
        // Given a store with enough events to span many pages
        let f = try StoreFixture(durability: .full)
        for n in 0..<20 {
            _ = try await f.store.append(to: "s-\(n)", events: Array(repeating: NewEvent(type: "T", data: Data(count: 2000)), count: 20))
        }
        await f.store.close()
        // When its data file loses its second half
        let dataPath = f.path + "/data.mdb"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: dataPath)[.size] as? NSNumber).intValue
        #expect(truncate(dataPath, off_t(size / 2)) == 0)
        // Then opening it fails with a clear error
        let error = #expect(throws: EventStoreError.self) { try f.reopen() }
        #expect(error?.code == .damaged)
        #expect(error?.message.contains("truncated") == true)
    }
}
