import EventStore
import Foundation
import Testing
import TestSupport

@Suite("Map growth")
struct MapGrowthTests {
    @Test("a store started with a 1 MiB map grows by itself to hold 100 MiB of events")
    func growsFromOneMiB() async throws {
        // Given a store whose map starts at 1 MiB
        let f = try StoreFixture(initialMapSize: 1 << 20)
        #expect(try f.store.statistics().mapSize == 1 << 20)
        // When 100 MiB of events are appended, including one event larger than the first map
        let chunk = Data(repeating: 0x61, count: 1 << 20)
        _ = try await f.store.append(to: "big", events: [NewEvent(type: "Huge", data: Data(repeating: 0x62, count: 4 << 20))])
        for batch in 0..<24 {
            _ = try await f.store.append(to: "s-\(batch)", events: Array(repeating: NewEvent(type: "Chunk", data: chunk), count: 4))
        }
        // Then every event is there and the map grew past 100 MiB
        let stats = try f.store.statistics()
        #expect(stats.eventCount == 97)
        #expect(stats.mapSize >= 100 << 20)
        #expect(stats.fileSize >= 100 << 20)
        #expect(try f.store.event(at: 1)?.data == Data(repeating: 0x62, count: 4 << 20))
        #expect(try f.store.read(from: 2, limit: .max).allSatisfy { $0.data == chunk })
    }

    @Test("a grown store reopens with its grown map, even when opened with a smaller one")
    func reopenAfterGrowth() async throws {
        let f = try StoreFixture(initialMapSize: 1 << 20)
        _ = try await f.store.append(to: "s", events: [NewEvent(type: "Big", data: Data(count: 3 << 20))])
        let grown = try f.store.statistics().mapSize
        await f.store.close()
        let reopened = try EventStore(path: f.path, configuration: StoreConfiguration(initialMapSize: 1 << 20))
        defer { reopened.close() }
        #expect(grown >= 4 << 20)
        #expect(try reopened.statistics().mapSize == grown)
        #expect(try reopened.event(at: 1)?.data.count == 3 << 20)
    }
}
