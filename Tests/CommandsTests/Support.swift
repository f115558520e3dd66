import Commands
import EventStore
import Foundation
import Projections
import TestSupport

/// A store, a backend and a runner of the domain projections, in a temporary directory; the
/// store's clock reads the test clock, so recorded dates follow it exactly.
final class DomainFixture: Sendable {
    let directory: TemporaryDirectory
    let clock = TestClock()
    let store: EventStore
    let backend: Backend
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    init(maximumAttempts: Int = 5) throws {
        directory = try TemporaryDirectory(prefix: "domain-test")
        let clock = self.clock
        let ids = SequentialIDs()
        store = try EventStore(
            path: directory.appending("store"),
            configuration: Configuration(
                durability: .noSync,
                clock: { Self.start.addingTimeInterval(Double(clock.now.offset.components.seconds) + Double(clock.now.offset.components.attoseconds) / 1e18) },
                idGenerator: { ids.next() }))
        backend = Backend(store: store, clock: clock, maximumAttempts: maximumAttempts)
    }

    func runner() async throws -> ProjectionRunner {
        try await ProjectionRunner(store: store, projections: ProjectionCatalog.domain)
    }
}
