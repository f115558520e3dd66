import Apps
import EventStore
import Foundation
import Projections
import TestSupport

/// A store in a temporary directory with deterministic time and ids, for the LMDB-only projection
/// tests (those of every backend use ConformanceTests' LogFixture).
final class ProjectionFixture: Sendable {
    let directory: TemporaryDirectory
    let clock = SteppingClock()
    let ids = SequentialIDs()
    let store: EventStore
    var path: String { directory.appending("store") }

    init() throws {
        directory = try TemporaryDirectory(prefix: "projections-test")
        store = try EventStore(path: directory.appending("store"), configuration: Self.configuration(clock, ids))
    }

    static func configuration(_ clock: SteppingClock, _ ids: SequentialIDs) -> StoreConfiguration {
        StoreConfiguration(durability: .noSync, clock: { clock.now() }, idGenerator: { ids.next() })
    }
}

func event(_ type: String, _ json: String = "{}") -> NewEvent {
    NewEvent(type: type, data: Data(json.utf8))
}
