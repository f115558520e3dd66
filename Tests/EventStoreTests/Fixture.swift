import EventStore
import Foundation
import TestSupport

/// A store in its own temporary directory, with a stepping clock and sequential ids, so every
/// recorded time and id is known in advance.
final class StoreFixture: Sendable {
    let directory: TemporaryDirectory
    let clock: SteppingClock
    let ids: SequentialIDs
    let store: EventStore

    var path: String { directory.appending("store") }

    init(durability: Durability = .noSync, initialMapSize: Int = 64 << 20, maximumEventsPerCommit: Int = 50_000) throws {
        directory = try TemporaryDirectory()
        clock = SteppingClock()
        ids = SequentialIDs()
        store = try EventStore(path: directory.appending("store"), configuration: Self.configuration(
            durability: durability, initialMapSize: initialMapSize, clock: clock, ids: ids,
            maximumEventsPerCommit: maximumEventsPerCommit))
    }

    static func configuration(
        durability: Durability = .noSync, initialMapSize: Int = 64 << 20, clock: SteppingClock, ids: SequentialIDs,
        maximumEventsPerCommit: Int = 50_000
    ) -> StoreConfiguration {
        StoreConfiguration(
            durability: durability, initialMapSize: initialMapSize, clock: { clock.now() }, idGenerator: { ids.next() },
            maximumEventsPerCommit: maximumEventsPerCommit)
    }

    /// Reopens the same directory (after `store.close()`) with the same clock and ids.
    func reopen() throws -> EventStore {
        try EventStore(path: path, configuration: Self.configuration(clock: clock, ids: ids))
    }

    /// The microseconds the stepping clock gives on its n-th read (0-based).
    static func micros(ofRead n: Int) -> Int64 {
        (1_767_225_600 + Int64(n)) * 1_000_000
    }
}

/// Shorthand for an event with JSON text as data.
func event(_ type: String, _ json: String = "{}", id: UUID? = nil, metadata: String = "") -> NewEvent {
    NewEvent(id: id, type: type, data: Data(json.utf8), metadata: Data(metadata.utf8))
}

