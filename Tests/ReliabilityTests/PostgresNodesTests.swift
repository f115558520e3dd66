import EventStore
import EventStorePostgres
import Foundation
import PostgresTestSupport
import Testing
import TestSupport

/// Several processes sharing one PostgreSQL store, as several hosts would: concurrent appends
/// (a contended stream with expected versions, own streams, multi-stream batches) lose no update
/// and leave no gap or duplicate, every process's subscription receives the identical sequence,
/// and killing a process mid-append loses nothing it acknowledged.
@Suite("PostgreSQL nodes", .serialized)
struct PostgresNodesTests {
    static var writer: URL { ProcessRunner.productsDirectory.appendingPathComponent("torture-writer") }

    @Test("four processes appending at once: no lost update, no gap, no duplicate, identical subscriptions")
    func fourNodes() async throws {
        // Given an empty store and four nodes, each appending 4 events per round
        let database = try await ThrowawayDatabase.create()
        try await PostgresEventStore(url: database.url).close()
        let nodes = 4
        let rounds = 15
        let total = nodes * rounds * 4
        // When they run at once
        let processes = try (0..<nodes).map { node in
            try RunningProcess(
                Self.writer, ["node", "--db", database.url, "--process", String(node), "--count", String(rounds), "--total", String(total)])
        }
        for process in processes {
            #expect(try await process.waitForExit(timeout: .seconds(120)) == 0, "a node did not finish: \(process.stderr)")
        }
        // Then every acknowledged position is distinct, and together they are 1...total
        var acknowledged: [UInt64] = []
        var sequences: Set<String> = []
        for process in processes {
            let lines = process.stdoutLines
            #expect(lines.last == "DONE")
            for line in lines where line.hasPrefix("ACK ") {
                acknowledged += line.dropFirst(4).split(separator: " ").compactMap { UInt64($0) }
            }
            sequences.formUnion(lines.filter { $0.hasPrefix("SEQ ") })
        }
        #expect(acknowledged.sorted() == Array(1...UInt64(total)))
        // And the log verifies clean, with the contended stream's versions each built on the one before
        let store = try await PostgresEventStore(url: database.url, mode: .readOnly)
        #expect(try await store.verify().isClean)
        let shared = try await store.readStream("shared")
        #expect(shared.map(\.version) == Array(1...UInt64(nodes * rounds)))
        for event in shared {
            let data = try JSONValue(parsing: Array(event.data))
            #expect(data["base"]?.intValue == Int64(event.version) - 1, "version \(event.version) was built on \(data["base"] ?? .null)")
        }
        for node in 0..<nodes {
            #expect(try await store.readStream("own-\(node)").map(\.version) == Array(1...UInt64(rounds)))
            #expect(try await store.readStream("pair-\(node)-a").count == rounds)
            #expect(try await store.readStream("pair-\(node)-b").count == rounds)
        }
        // And every node's subscription received the log as it is, in the same order
        var digest = SequenceDigest()
        for event in try await store.read(limit: .max) { digest.add(event) }
        #expect(sequences == ["SEQ \(total) \(digest.text)"])
        await store.close()
        try await database.drop()
    }

    @Test("a process killed mid-append loses nothing it acknowledged and leaves no gap")
    func killANode() async throws {
        // Given a store and a writer appending batches and acknowledging each
        let database = try await ThrowawayDatabase.create()
        var acknowledged: [UInt64: (first: UInt64, count: Int)] = [:]
        var next: UInt64 = 1
        for _ in 0..<5 {
            let child = try RunningProcess(Self.writer, ["append", "--db", database.url, "--start", String(next), "--seed", "11"])
            // When it is killed after some acknowledgements
            try await child.waitForStdoutLines(Int.random(in: 3...15))
            try await Task.sleep(for: .microseconds(Int.random(in: 0...5_000)))
            child.send(SIGKILL)
            _ = try await child.waitForExit()
            for line in child.stdoutLines {
                let parts = line.split(separator: " ")
                guard parts.count == 4, parts[0] == "ACK", let batch = UInt64(parts[1]), let first = UInt64(parts[2]),
                    let count = Int(parts[3])
                else { continue }
                acknowledged[batch] = (first, count)
            }
            // Then the log verifies clean (no gap), and holds every acknowledged batch whole
            let store = try await PostgresEventStore(url: database.url)
            #expect(try await store.verify().isClean)
            let events = try await store.read(limit: .max)
            #expect(events.map(\.position) == (0..<UInt64(events.count)).map { $0 + 1 })
            for (batch, place) in acknowledged {
                let expected = TortureBatch.appends(seed: 11, batch: batch).flatMap(\.events)
                let stored = events.dropFirst(Int(place.first) - 1).prefix(place.count)
                #expect(stored.map(\.id) == expected.map(\.id), "batch \(batch) is not whole at \(place.first)")
                #expect(stored.map(\.data) == expected.map(\.data))
            }
            // And the next writer goes on after the last batch in the log
            let batches = try events.map { try #require(JSONValue(parsing: Array($0.data))["batch"]?.intValue) }
            next = UInt64(batches.max() ?? 0) + 1
            await store.close()
        }
        #expect(acknowledged.count >= 5)
        try await database.drop()
    }
}
