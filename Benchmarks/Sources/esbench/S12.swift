import EventStore
import Foundation

// MARK: S12 what upcasting costs a read

extension Bench {
    /// S12: the same log read three ways, each by a handle of its own: with no upcasters, with
    /// upcasters of another type registered (what a store pays for the feature when its events
    /// never evolved), and with a step for the log's own type, so every event is parsed and
    /// written again. Each way is read in rounds, interleaved, and the best round counts, so
    /// that a noisy neighbour does not pick the winner. Two reads: the whole log a page of 1,000
    /// at a time, and the last 10 events of random streams (S6's read, copied out).
    func s12() async throws {
        let workload = Workload(streams: options.streams)
        let events = options.readSetupEvents
        let path = directory("s12-store")
        do {
            let store = try EventStore(path: path, configuration: StoreConfiguration(durability: .noSync, initialMapSize: 1 << 30))
            for start in stride(from: 0, to: events, by: 10_000) {
                _ = try await store.append(workload.appends(start..<min(start + 10_000, events)))
            }
            await store.close()
        }
        let other = [
            Upcaster("SomethingElse", from: 1) { $0 }, Upcaster("SomethingElse", from: 2, renamingTo: "SomethingNew") { $0 },
        ]
        let ways: [(name: String, upcasters: [Upcaster])] = [
            ("no upcasters", []),
            ("upcasters of another type", other),
            // A name as long as the log's own type: the length filter lets it through to the hash.
            ("upcasters of another type of the same length", [Upcaster("Occurred", from: 1) { $0 }]),
            ("every event upcast (a step that adds a member)", other + [Upcaster(Workload.type, from: 1) { data in
                guard case let .object(members) = data else { return data }
                return .object(members + [("unit", "steps")])
            }]),
        ]
        var random = SplitMix(seed: 12)
        let names = (0..<options.streams).map(workload.streamName)
        let streams = (0..<options.reads).map { _ in names[random.next(options.streams)] }
        var bestLog = [Double](repeating: .infinity, count: ways.count)
        var bestStreams = [Double](repeating: .infinity, count: ways.count)
        var checksum = 0
        for _ in 0..<3 {
            for (index, way) in ways.enumerated() {
                let store = try EventStore(path: path, configuration: StoreConfiguration(durability: .noSync, upcasters: way.upcasters))
                let log = try await Measure.seconds {
                    var next: UInt64 = 1
                    while true {
                        let page = try store.read(from: next, limit: 1000)
                        guard let last = page.last else { break }
                        checksum &+= page.count
                        next = last.position + 1
                    }
                }
                let reads = try await Measure.seconds {
                    for stream in streams { checksum &+= try store.readStream(stream, direction: .backward, limit: 10).count }
                }
                await store.close()
                bestLog[index] = min(bestLog[index], log)
                bestStreams[index] = min(bestStreams[index], reads)
            }
        }
        cleanUp(path)
        if checksum == 42 { print("") }
        for (index, way) in ways.enumerated() {
            report.add(Figure(
                scenario: "S12", contender: "eventstore", metric: "whole log, pages of 1,000: \(way.name)",
                value: Double(events) / bestLog[index], unit: "events/s", note: index == 0 ? "\(events) events, best of 3 rounds" : ""))
            report.add(Figure(
                scenario: "S12", contender: "eventstore", metric: "last 10 of a stream: \(way.name)",
                value: Double(options.reads) / bestStreams[index], unit: "reads/s"))
        }
        let otherRatio = bestLog[0] / bestLog[1]
        report.judge(
            "S12", "reads with upcasters of other types ≥ 0.95 × none (same run)",
            measured: String(
                format: "log %.2f ×, streams %.2f ×; same length: log %.2f ×, streams %.2f ×; every event upcast: log %.2f ×", otherRatio,
                bestStreams[0] / bestStreams[1], bestLog[0] / bestLog[2], bestStreams[0] / bestStreams[2], bestLog[0] / bestLog[3]),
            otherRatio >= 0.95 && bestStreams[0] / bestStreams[1] >= 0.95)
    }
}
