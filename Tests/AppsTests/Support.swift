import Apps
import Commands
import EventStore
import Foundation
import Projections
import Testing
import TestSupport

/// A store, a backend and a runner of the domain projections, in a temporary directory; the
/// store's clock reads the test clock, so recorded dates follow it exactly.
final class DomainFixture: Sendable {
    let directory: TemporaryDirectory
    let clock = TestClock()
    let store: EventStore
    let backend: AppBackend
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    init(maximumAttempts: Int = 5, snapshotInterval: Int = 100) throws {
        directory = try TemporaryDirectory(prefix: "domain-test")
        let clock = self.clock
        let ids = SequentialIDs()
        store = try EventStore(
            path: directory.appending("store"),
            configuration: Configuration(
                durability: .noSync,
                clock: { Self.start.addingTimeInterval(Double(clock.now.offset.components.seconds) + Double(clock.now.offset.components.attoseconds) / 1e18) },
                idGenerator: { ids.next() }))
        backend = AppBackend(store: store, clock: clock, configuration: CommandHandler.Configuration(maximumAttempts: maximumAttempts, snapshotInterval: snapshotInterval))
    }

    func runner() async throws -> ProjectionRunner {
        try await ProjectionRunner(store: store, projections: AppCatalog.apps)
    }
}

extension DeciderOutcome {
    /// Expects the command refused by the apps' rules with `code` (and `message`, when given).
    func thenRefused(_ code: AppError.Code, _ message: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        thenThrows(AppError.self, sourceLocation: sourceLocation) { error in
            #expect(error.code == code, sourceLocation: sourceLocation)
            if let message { #expect(error.message == message, sourceLocation: sourceLocation) }
        }
    }
}
