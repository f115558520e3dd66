import Apps
import Commands
import EventStore
import EventStoreTesting
import Foundation
import Projections
import Testing

/// The same traffic on LMDB and on PostgreSQL, with the same clock and ids, gives the same store.
@Suite("LMDB and PostgreSQL side by side")
struct CrossBackendTests {
    @Test("the same seeded domain traffic gives byte-identical logs, snapshots and projection states on both backends", arguments: [UInt64(3), 29])
    func sameTrafficSameStore(seed: UInt64) async throws {
        try await withDomain(.lmdb, snapshotInterval: 7) { lmdb in
            try await withDomain(.postgres, snapshotInterval: 7) { postgres in
                // Given every registered projection on each store
                let runners = (
                    lmdb: try await ProjectionRunner(store: lmdb.store, projections: AppCatalog.all),
                    postgres: try await ProjectionRunner(store: postgres.store, projections: AppCatalog.all)
                )
                // When the same seeded traffic runs on each (each store's clock moved the same way,
                // its projections caught up at the same moments)
                try await domainTraffic(lmdb.backend, clock: lmdb.clock, seed: seed) { random in
                    if Int.random(in: 0..<30, using: &random) == 0 { try await runners.lmdb.catchUp() }
                }
                try await domainTraffic(postgres.backend, clock: postgres.clock, seed: seed) { random in
                    if Int.random(in: 0..<30, using: &random) == 0 { try await runners.postgres.catchUp() }
                }
                // Then the logs are the same, event for event and byte for byte
                let events = try await lmdb.store.events()
                #expect(events.count > 100, "seed \(seed) recorded only \(events.count) events")
                #expect(try await postgres.store.events() == events)
                #expect(try await postgres.store.headPosition() == (try await lmdb.store.headPosition()))
                for stream in Set(events.map(\.stream)).sorted() {
                    #expect(try await postgres.store.streamVersion(stream) == (try await lmdb.store.streamVersion(stream)), "\(stream)")
                }
                // And so are the snapshots the commands wrote with their appends
                let snapshots = try await Snapshots.list(in: lmdb.store)
                #expect(!snapshots.isEmpty)
                #expect(try await Snapshots.list(in: postgres.store) == snapshots)
                // And every projection's state after catching up: hash and rows
                try await runners.lmdb.catchUp()
                try await runners.postgres.catchUp()
                let live = try await AppCatalog.all.asyncMap { try await runners.lmdb.storedHash(of: $0.name) }
                #expect(try await AppCatalog.all.asyncMap { try await runners.postgres.storedHash(of: $0.name) } == live)
                #expect(try await dump(postgres.store, AppCatalog.all) == (try dump(lmdb.store, AppCatalog.all)))
                #expect(try await runners.postgres.statuses().map(\.checkpoint) == (try runners.lmdb.statuses().map(\.checkpoint)))
                // And after a rebuild of every one, the same hashes again, those of the live states
                let rebuilt = (lmdb: try await runners.lmdb.rebuild(), postgres: try await runners.postgres.rebuild())
                #expect(rebuilt.lmdb.map(\.hash) == live)
                #expect(rebuilt.postgres.map(\.hash) == live)
                #expect(rebuilt.postgres.map(\.eventsApplied) == rebuilt.lmdb.map(\.eventsApplied))
                #expect(rebuilt.postgres.map(\.eventsSkipped) == rebuilt.lmdb.map(\.eventsSkipped))
                #expect(try await dump(postgres.store, AppCatalog.all) == (try dump(lmdb.store, AppCatalog.all)))
            }
        }
    }
}
