import EventStore
import EventStorePostgres
import Foundation

// MARK: S11 conditional appends (dynamic consistency boundaries)

extension Bench {
    /// S11: 16 racing writers each reserve the same site, deciding from the same head and
    /// appending on the condition that nothing tagged with the site was recorded since: exactly
    /// one commits, on both backends. And what the condition costs: on a log of 1,000,000 tagged
    /// events (10,000 sites), best of 3 rounds, 2,000 appends of one tagged event with and
    /// without a condition on its site after the head (a seek of the site's tag index), side by
    /// side in one run.
    func s11() async throws {
        let events = 1_000_000
        let path = directory("s11")
        let store = try EventStore(path: path, configuration: StoreConfiguration(durability: .noSync, initialMapSize: 1 << 31))
        for start in stride(from: 0, to: events, by: 10_000) {
            let batch = (start..<min(start + 10_000, events)).map { n in
                NewEvent(type: n % 4 == 0 ? "Reserved" : "Noted", data: Data("{\"n\":\(n)}".utf8), tags: ["site:\(n % 10_000)", "camper:C\(n % 997)"])
            }
            _ = try await store.append([StreamAppend(stream: "camp-\(start / 10_000 % 100)", events: batch)])
        }
        let (plain, conditional) = try await Self.conditionCost(store, appends: 2_000, sites: 10_000)
        let racers = try await Self.racers(store)
        await store.close()
        cleanUp(path)
        let ratio = conditional / plain
        report.add(Figure(scenario: "S11", contender: "eventstore", metric: "appends of 1 tagged event, no condition", value: 2_000 / plain, unit: "appends/s", note: "\(events) events in the log"))
        report.add(Figure(scenario: "S11", contender: "eventstore", metric: "appends of 1 tagged event on a condition", value: 2_000 / conditional, unit: "appends/s", note: "its site's tag after the head"))
        report.add(Figure(scenario: "S11", contender: "eventstore", metric: "racers committed of 16", value: Double(racers), unit: "writers"))
        report.judge("S11", "16 racers: exactly one commits (LMDB)", measured: "\(racers) of 16", racers == 1)
        report.judge("S11", "a conditional append over 1M events ≤ 2 × an unconditional one (LMDB)", measured: String(format: "%.2f ×", ratio), ratio <= 2)
        try await postgresS11()
    }

    /// Best of 3 rounds: `appends` single-event appends without a condition, then as many on the
    /// condition that nothing of the event's site was recorded after the head. Seconds each.
    static func conditionCost(_ store: any EventLog, appends: Int, sites: Int) async throws -> (plain: Double, conditional: Double) {
        var bestPlain = Double.infinity
        var bestConditional = Double.infinity
        var head = try await store.headPosition()
        for round in 0..<3 {
            bestPlain = min(bestPlain, try await Measure.seconds {
                for n in 0..<appends {
                    let event = NewEvent(type: "Reserved", data: Data("{}".utf8), tags: ["site:\((n * 7 + round) % sites)"])
                    head = try await store.append([StreamAppend(stream: "plain-\(round)", events: [event])])[0].positions[0]
                }
            })
            bestConditional = min(bestConditional, try await Measure.seconds {
                for n in 0..<appends {
                    let site = "site:\((n * 13 + round) % sites)"
                    let event = NewEvent(type: "Reserved", data: Data("{}".utf8), tags: [site])
                    let condition = AppendCondition(failIfEventsMatch: EventQuery(types: ["Reserved"], tags: [site]), after: head)
                    head = try await store.append([StreamAppend(stream: "conditional-\(round)", events: [event])], condition: condition)[0].positions[0]
                }
            })
        }
        return (bestPlain, bestConditional)
    }

    /// 16 tasks reserve one new site on the same condition after the same head; how many commit.
    static func racers(_ store: any EventLog) async throws -> Int {
        let query = EventQuery(types: ["Reserved"], tags: ["site:raced"])
        let head = try await store.read(query, after: 0, limit: 1).head
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for racer in 0..<16 {
                group.addTask {
                    do {
                        _ = try await store.append(
                            [StreamAppend(stream: "racer-\(racer)", events: [NewEvent(type: "Reserved", tags: ["site:raced"])])],
                            condition: AppendCondition(failIfEventsMatch: query, after: head))
                        return 1
                    } catch let error as EventStoreError where error.code == .conditionFailed {
                        return 0
                    }
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// S11 on PostgreSQL: the racers, and the condition's cost on a log of 100,000 tagged events
    /// (1,000 sites; a log of a million takes minutes to load here).
    func postgresS11() async throws {
        guard let url = try postgresDatabase("esbench_s11") else { return noPostgres("S11") }
        let store = try await PostgresEventStore(url: url)
        let events = 100_000
        for start in stride(from: 0, to: events, by: 5_000) {
            let batch = (start..<min(start + 5_000, events)).map { n in
                NewEvent(type: n % 4 == 0 ? "Reserved" : "Noted", data: Data("{\"n\":\(n)}".utf8), tags: ["site:\(n % 1_000)"])
            }
            _ = try await store.append([StreamAppend(stream: "camp-\(start / 5_000)", events: batch)])
        }
        let (plain, conditional) = try await Self.conditionCost(store, appends: 300, sites: 1_000)
        let racers = try await Self.racers(store)
        await store.close()
        let ratio = conditional / plain
        report.add(Figure(scenario: "S11", contender: "postgres", metric: "appends of 1 tagged event, no condition", value: 300 / plain, unit: "appends/s", note: "\(events) events in the log"))
        report.add(Figure(scenario: "S11", contender: "postgres", metric: "appends of 1 tagged event on a condition", value: 300 / conditional, unit: "appends/s", note: "its own transaction, head row locked"))
        report.add(Figure(scenario: "S11", contender: "postgres", metric: "racers committed of 16", value: Double(racers), unit: "writers"))
        report.judge("S11", "16 racers: exactly one commits (PostgreSQL)", measured: "\(racers) of 16", racers == 1)
        report.add(Figure(scenario: "S11", contender: "postgres", metric: "conditional / unconditional", value: ratio, unit: "×", note: "no target: a conditional append is a transaction of its own"))
    }
}
