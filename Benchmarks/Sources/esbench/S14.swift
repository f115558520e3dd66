import EventStore
import Foundation

// MARK: S14 what personal data costs, and what it costs the events without any

extension Bench {
    /// S14: events without personal data cost what they cost before. Two stores of the same
    /// log (the read setup's events): one where no event has personal data, one where every
    /// tenth stream's events are sealed for a subject of their own. Measured side by side in one
    /// run, best of 3 rounds: appends of one event without personal data, the last 10 events of
    /// a stream without personal data, and whole-log pages of 1,000 (which in the second store
    /// open the sealed events too); and, for what sealing itself costs, appends and reads of
    /// events with a personal field.
    func s14() async throws {
        let workload = Workload(streams: options.streams)
        let events = options.readSetupEvents
        let paths = [directory("s14-plain"), directory("s14-personal")]
        var stores: [EventStore] = []
        for (index, path) in paths.enumerated() {
            let store = try EventStore(path: path, configuration: StoreConfiguration(durability: .noSync, initialMapSize: 1 << 30))
            for start in stride(from: 0, to: events, by: 10_000) {
                var appends = workload.appends(start..<min(start + 10_000, events))
                if index == 1 {
                    for part in appends.indices where part % 10 == 0 {
                        let subject = "subject-" + appends[part].stream
                        for event in appends[part].events.indices {
                            appends[part].events[event].data = Data("{\"note\":\"private\",\"n\":\(event)}".utf8)
                            appends[part].events[event].personal = [PersonalData(subject: subject, fields: ["note"])]
                        }
                    }
                }
                _ = try await store.append(appends)
            }
            stores.append(store)
        }
        var random = SplitMix(seed: 14)
        let plainStreams = (0..<options.streams).filter { $0 % 10 != 0 }.map(workload.streamName)
        let reads = (0..<options.reads).map { _ in plainStreams[random.next(plainStreams.count)] }
        let appends = 2_000
        var checksum = 0
        var bestAppend = [Double.infinity, .infinity]
        var bestStream = [Double.infinity, .infinity]
        var bestLog = [Double.infinity, .infinity]
        var bestSealedAppend = Double.infinity
        var bestSealedRead = Double.infinity
        for round in 0..<3 {
            for (index, store) in stores.enumerated() {
                bestAppend[index] = min(bestAppend[index], try await Measure.seconds {
                    for n in 0..<appends {
                        _ = try await store.append(to: "plain-\(round)", events: [NewEvent(type: Workload.type, data: workload.data(n))])
                    }
                })
                bestStream[index] = min(bestStream[index], try await Measure.seconds {
                    for stream in reads { checksum &+= try store.readStream(stream, direction: .backward, limit: 10).count }
                })
                bestLog[index] = min(bestLog[index], try await Measure.seconds {
                    var next: UInt64 = 1
                    while let last = try store.read(from: next, limit: 1000).last { next = last.position + 1 }
                })
            }
            let store = stores[1]
            bestSealedAppend = min(bestSealedAppend, try await Measure.seconds {
                for n in 0..<appends {
                    let event = NewEvent(
                        type: Workload.type, data: Data("{\"note\":\"private \(n)\",\"n\":\(n)}".utf8),
                        personal: [PersonalData(subject: "subject-sealed-\(round)", fields: ["note"])])
                    _ = try await store.append(to: "sealed-\(round)", events: [event])
                }
            })
            bestSealedRead = min(bestSealedRead, try await Measure.seconds {
                for _ in 0..<(options.reads / 10) { checksum &+= try store.readStream("sealed-\(round)", direction: .backward, limit: 10).count }
            })
        }
        for (store, path) in zip(stores, paths) {
            await store.close()
            cleanUp(path)
        }
        if checksum == 42 { print("") }
        let appendRatio = bestAppend[0] / bestAppend[1]
        let streamRatio = bestStream[0] / bestStream[1]
        let logRatio = bestLog[0] / bestLog[1]
        for (index, label) in ["no personal data in the store", "every 10th stream sealed"].enumerated() {
            report.add(Figure(
                scenario: "S14", contender: "eventstore", metric: "appends of 1 event without personal data: \(label)",
                value: Double(appends) / bestAppend[index], unit: "appends/s"))
            report.add(Figure(
                scenario: "S14", contender: "eventstore", metric: "last 10 of a stream without personal data: \(label)",
                value: Double(options.reads) / bestStream[index], unit: "reads/s"))
            report.add(Figure(
                scenario: "S14", contender: "eventstore", metric: "whole log, pages of 1,000: \(label)",
                value: Double(events) / bestLog[index], unit: "events/s"))
        }
        report.add(Figure(
            scenario: "S14", contender: "eventstore", metric: "appends of 1 event with a personal field", value: Double(appends) / bestSealedAppend,
            unit: "appends/s"))
        report.add(Figure(
            scenario: "S14", contender: "eventstore", metric: "last 10 of a stream with a personal field (opened)",
            value: Double(options.reads / 10) / bestSealedRead, unit: "reads/s"))
        report.judge(
            "S14", "appends and reads of events without personal data ≥ 0.9 × a store with none",
            measured: String(format: "appends %.2f ×, stream reads %.2f ×; whole log (a tenth sealed) %.2f ×", appendRatio, streamRatio, logRatio),
            appendRatio >= 0.9 && streamRatio >= 0.9)
    }
}
