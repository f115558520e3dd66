import EventStore
import Foundation

// MARK: S13 what deletion and retention cost

extension Bench {
    /// S13: what deletion costs the rest of the store. Three figures, each measured side by side
    /// in one run, best of 3 rounds:
    /// - reads of a log with holes: the same log read before and after half its streams are
    ///   deleted (half its events become holes), as live events read per second: whole-log pages
    ///   of 1,000, and the last 10 events of a kept stream;
    /// - a delete's cost is flat in history: deleting a stream of 100 events at the end of a log
    ///   of 10,000 events and of the read setup's (100,000 by default), best of 20;
    /// - appends to a stream with a retention policy of 100 events (each append also removes one
    ///   and commits its `$StreamDeleted` record) next to appends to a stream without one.
    func s13() async throws {
        let workload = Workload(streams: options.streams)
        let events = options.readSetupEvents
        let path = directory("s13-store")
        let store = try EventStore(path: path, configuration: StoreConfiguration(durability: .noSync, initialMapSize: 1 << 30))
        for start in stride(from: 0, to: events, by: 10_000) {
            _ = try await store.append(workload.appends(start..<min(start + 10_000, events)))
        }
        // First (before the big log has holes, whose free pages LMDB would also walk): a delete of
        // 100 events at the end of a smaller log and of the big one, best of 20.
        let smallPath = directory("s13-small")
        let small = try EventStore(path: smallPath, configuration: StoreConfiguration(durability: .noSync))
        for start in stride(from: 0, to: 10_000, by: 5_000) { _ = try await small.append(workload.appends(start..<(start + 5_000))) }
        var bestDelete = [Double.infinity, .infinity]
        for round in 0..<20 {
            for (index, target) in [small, store].enumerated() {
                let stream = "doomed-\(round)"
                _ = try await target.append(to: stream, events: (0..<100).map { NewEvent(type: Workload.type, data: workload.data($0)) })
                bestDelete[index] = min(bestDelete[index], try await Measure.seconds { _ = try await target.deleteStream(stream) })
            }
        }
        await small.close()
        cleanUp(smallPath)

        var random = SplitMix(seed: 13)
        let kept = (0..<options.streams).filter { $0 % 2 == 1 }.map(workload.streamName)
        let streams = (0..<options.reads).map { _ in kept[random.next(kept.count)] }
        var checksum = 0
        func readAll() async throws -> (seconds: Double, live: Int) {
            var live = 0
            let seconds = try await Measure.seconds {
                var next: UInt64 = 1
                while true {
                    let page = try store.read(from: next, limit: 1000)
                    guard let last = page.last else { break }
                    live += page.count
                    next = last.position + 1
                }
            }
            return (seconds, live)
        }
        func readStreams() async throws -> Double {
            try await Measure.seconds {
                for stream in streams { checksum &+= try store.readStream(stream, direction: .backward, limit: 10).count }
            }
        }
        var bestLog = [Double.infinity, .infinity]
        var bestStreams = [Double.infinity, .infinity]
        var liveEvents = [0, 0]
        for _ in 0..<3 {
            let whole = try await readAll()
            bestLog[0] = min(bestLog[0], whole.seconds / Double(max(whole.live, 1)))
            liveEvents[0] = whole.live
            bestStreams[0] = min(bestStreams[0], try await readStreams())
        }
        for index in stride(from: 0, to: options.streams, by: 2) {
            _ = try await store.deleteStream(workload.streamName(index))
        }
        for _ in 0..<3 {
            let whole = try await readAll()
            bestLog[1] = min(bestLog[1], whole.seconds / Double(max(whole.live, 1)))
            liveEvents[1] = whole.live
            bestStreams[1] = min(bestStreams[1], try await readStreams())
        }

        // Appends of one event to a stream without a policy and to one that keeps 100.
        let appends = 2_000
        _ = try await store.append(to: "capped", events: (0..<100).map { NewEvent(type: Workload.type, data: workload.data($0)) })
        try await store.setRetention(RetentionPolicy(maxCount: 100), for: "capped")
        var bestAppend = [Double.infinity, .infinity]
        for _ in 0..<3 {
            for (index, stream) in ["uncapped", "capped"].enumerated() {
                let seconds = try await Measure.seconds {
                    for n in 0..<appends {
                        _ = try await store.append(to: stream, events: [NewEvent(type: Workload.type, data: workload.data(n))])
                    }
                }
                bestAppend[index] = min(bestAppend[index], seconds)
            }
        }
        let report = try store.verify()
        await store.close()
        cleanUp(path)
        if checksum == 42 || !report.isClean { print("verify: \(report.problems)") }

        let logRatio = bestLog[0] / bestLog[1]
        let streamRatio = bestStreams[0] / bestStreams[1]
        let deleteRatio = bestDelete[1] / bestDelete[0]
        self.report.add(Figure(
            scenario: "S13", contender: "eventstore", metric: "whole log, pages of 1,000: no holes", value: 1 / bestLog[0],
            unit: "events/s", note: "\(liveEvents[0]) events, best of 3 rounds"))
        self.report.add(Figure(
            scenario: "S13", contender: "eventstore", metric: "whole log, pages of 1,000: half the streams deleted", value: 1 / bestLog[1],
            unit: "events/s", note: "\(liveEvents[1]) live events among \(liveEvents[0]) positions"))
        self.report.add(Figure(
            scenario: "S13", contender: "eventstore", metric: "last 10 of a kept stream: no holes", value: Double(options.reads) / bestStreams[0], unit: "reads/s"))
        self.report.add(Figure(
            scenario: "S13", contender: "eventstore", metric: "last 10 of a kept stream: half the streams deleted",
            value: Double(options.reads) / bestStreams[1], unit: "reads/s"))
        self.report.add(Figure(
            scenario: "S13", contender: "eventstore", metric: "delete a stream of 100 events: log of 10,000", value: bestDelete[0] * 1000, unit: "ms"))
        self.report.add(Figure(
            scenario: "S13", contender: "eventstore", metric: "delete a stream of 100 events: log of \(events)", value: bestDelete[1] * 1000, unit: "ms"))
        self.report.add(Figure(
            scenario: "S13", contender: "eventstore", metric: "appends of 1 event: no policy", value: Double(appends) / bestAppend[0], unit: "appends/s"))
        self.report.add(Figure(
            scenario: "S13", contender: "eventstore", metric: "appends of 1 event: keeps 100 (each trims one)",
            value: Double(appends) / bestAppend[1], unit: "appends/s"))
        self.report.judge(
            "S13", "reads of a log with holes ≥ 0.8 × without, per live event; a delete costs ≤ 2 × in a \(events / 1000)k log than in a 10k one",
            measured: String(
                format: "log %.2f ×, streams %.2f ×; delete %.2f ×; appends with a policy %.2f × without", logRatio, streamRatio, deleteRatio,
                bestAppend[0] / bestAppend[1]),
            report.isClean && logRatio >= 0.8 && streamRatio >= 0.8 && deleteRatio <= 2)
    }
}
