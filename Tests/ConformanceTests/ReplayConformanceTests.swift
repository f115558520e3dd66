import Apps
import EventStore
import EventStoreTesting
import Foundation
import Projections
import ProjectionsTestSupport
import Testing

/// For random event sequences: the live state (caught up at random moments, in random batch
/// sizes) equals the rebuilt state equals the state as of the head, and a snapshot plus the tail
/// equals the full fold.
@Suite("Deterministic replay, on every backend")
struct ReplayConformanceTests {
    static let seeds: [UInt64] = [1, 7, 42, 2024, 0xDEAD_BEEF]

    @Test("live == rebuilt == as of the head, and snapshot + tail == full fold", arguments: Backend.allCases, seeds)
    func replayIsDeterministic(_ backend: Backend, seed: UInt64) async throws {
        try await withLog(backend) { f in
            // Given random appends, caught up at random moments in batches of a random size
            var random = SeededGenerator(seed: seed)
            let projections: [any Projection] = [EventCountByType(), StreamSummary(), Ledger(errorPolicy: .skip)]
            let runner = try await ProjectionRunner(
                store: f.log, projections: projections, batchSize: UInt64.random(in: 1...50, using: &random))
            let types = ["Opened", "Deposited", "Closed", "Poison", "Other"]
            let count = Int.random(in: 50...300, using: &random)
            var appended = 0
            while appended < count {
                let size = Int.random(in: 1...8, using: &random)
                let stream = "acct-\(Int.random(in: 0..<6, using: &random))"
                let events = (0..<size).map { _ in
                    event(types.randomElement(using: &random) ?? "Other", #"{"amount":\#(Int.random(in: -50...50, using: &random))}"#)
                }
                _ = try await f.log.append(to: stream, events: events)
                appended += size
                if Bool.random(using: &random) && Bool.random(using: &random) { try await runner.catchUp() }
            }
            try await runner.catchUp()
            let head = try await f.log.headPosition()
            let snapshotAt = UInt64.random(in: 0...head, using: &random)
            let all = try await f.log.events()

            // Then every way to the state gives the same hash
            for projection in projections {
                let context = Comment(rawValue: "seed \(seed), projection \(projection.name)")
                let live = try await runner.storedHash(of: projection.name)
                let asOfHead = try await StateHash.of(projection, in: try runner.state(of: projection.name, asOf: head).reader)
                var snapshot = try await runner.state(of: projection.name, asOf: snapshotAt)
                try snapshot.fold(all.filter { $0.position > snapshotAt }, with: projection)
                let snapshotPlusTail = try await StateHash.of(projection, in: snapshot.reader)
                let rebuilt = try await runner.rebuild([projection.name])[0].hash
                #expect(live == rebuilt, context)
                #expect(live == asOfHead, context)
                #expect(live == snapshotPlusTail, context)
            }
        }
    }
}
