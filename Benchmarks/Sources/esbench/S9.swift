import Apps
import EventStore
import Foundation
import Logging
import Projections
import Synchronization

extension Bench {
    /// S9: durable single-event appends of 64 tasks while a rebuild of the domain projections
    /// over `domainEvents` events runs in the same process, against the same appends with no
    /// rebuild, measured in the same run.
    func s9() async throws {
        let n = options.domainEvents
        let storePath = directory("s9-store")
        var store = try EventStore(path: storePath, configuration: StoreConfiguration(durability: .noSync, initialMapSize: 1 << 30))
        try await DomainWorkload.fill(store, count: n)
        await store.close()
        var configuration = StoreConfiguration(durability: .full, initialMapSize: 1 << 30)
        if ProcessInfo.processInfo.environment["ESBENCH_SLOW_COMMITS"] != nil {
            configuration.slowCommitThreshold = .milliseconds(4)
            configuration.logger = Logger(label: "s9", factory: { label in StreamLogHandler.standardError(label: label) })
        }
        store = try EventStore(path: storePath, configuration: configuration)
        let runner = try await ProjectionRunner(store: store, projections: AppCatalog.apps)
        try await runner.catchUp()
        let tasks = options.writerTasks
        let perTask = options.s9AppendsPerTask

        let quiet = try await Self.appendLatencies(store, tasks: tasks, perTask: perTask, while: nil)
        let rebuilding = Flag()
        rebuilding.set()
        let started = ContinuousClock.now
        let rebuild = Task {
            defer { rebuilding.clear() }
            return try await runner.rebuild()
        }
        let during = try await Self.appendLatencies(store, tasks: tasks, perTask: perTask, while: rebuilding)
        let reports = try await rebuild.value
        let rebuildSeconds = Measure.elapsed(since: started)
        await store.close()
        cleanUp(storePath)

        let quietSorted = quiet.sorted()
        let duringSorted = during.sorted()
        let p50 = (Measure.percentile(quietSorted, 0.5) * 1000, Measure.percentile(duringSorted, 0.5) * 1000)
        let p99 = (Measure.percentile(quietSorted, 0.99) * 1000, Measure.percentile(duringSorted, 0.99) * 1000)
        report.add(Figure(scenario: "S9", contender: "eventstore", metric: "append p50, no rebuild", value: p50.0, unit: "ms", note: "\(tasks) tasks, \(quiet.count) durable single-event appends"))
        report.add(Figure(scenario: "S9", contender: "eventstore", metric: "append p99, no rebuild", value: p99.0, unit: "ms"))
        report.add(Figure(scenario: "S9", contender: "eventstore", metric: "append p50, rebuilding", value: p50.1, unit: "ms", note: "\(during.count) appends while the rebuild ran"))
        report.add(Figure(scenario: "S9", contender: "eventstore", metric: "append p99, rebuilding", value: p99.1, unit: "ms"))
        report.add(Figure(scenario: "S9", contender: "eventstore", metric: "rebuild beside", value: Double(reports.first?.checkpoint ?? 0) / rebuildSeconds, unit: "events/s", note: "\(AppCatalog.apps.count) projections over \(n) events and the appends, appends going on"))
        report.judge("S9", "append p50 while rebuilding ≤ 2 × without", measured: String(format: "%.2f ×", p50.1 / p50.0), p50.1 <= 2 * p50.0)
        report.judge("S9", "append p99 while rebuilding ≤ 2 × without", measured: String(format: "%.2f ×", p99.1 / p99.0), p99.1 <= 2 * p99.0)
    }

    /// The latency of each append, in seconds: `tasks` tasks each appending one event at a time,
    /// `perTask` each, or, with `while`, as long as it is set (and at least once each).
    static func appendLatencies(_ store: EventStore, tasks: Int, perTask: Int, while running: Flag?) async throws -> [Double] {
        try await withThrowingTaskGroup(of: [Double].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var latencies: [Double] = []
                    var i = 0
                    while running.map({ $0.isSet || latencies.isEmpty }) ?? (i < perTask) {
                        let event = NewEvent(type: "S9Appended", data: Data(#"{"task":\#(task),"n":\#(i)}"#.utf8))
                        let start = ContinuousClock.now
                        _ = try await store.append(to: "s9-\(task)", events: [event])
                        latencies.append(Measure.elapsed(since: start))
                        i += 1
                    }
                    return latencies
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }
}

/// A flag one task sets and others read.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    func clear() { value.store(false, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
