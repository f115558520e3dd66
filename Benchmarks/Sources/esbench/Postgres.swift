import EventStore
import EventStorePostgres
import Foundation

/// The PostgreSQL backend as a contender in S1, S2 and S4, on the cluster `--postgres URL` (or
/// $ESTEST_POSTGRES_URL) names: scripts/bench.sh starts a throwaway cluster with PostgreSQL's
/// durable defaults (fsync and synchronous_commit on) and passes it. Each scenario makes a
/// database of its own in it.
extension Bench {
    /// The cluster's URL, or nil (the PostgreSQL rows then say so).
    var postgresURL: String? {
        value(after: "--postgres") ?? ProcessInfo.processInfo.environment["ESTEST_POSTGRES_URL"]
    }

    /// A fresh database in the cluster, as a URL.
    func postgresDatabase(_ name: String) throws -> String? {
        guard let url = postgresURL, let socket = url.range(of: "?host=").map({ String(url[$0.upperBound...]) }) else { return nil }
        for statement in ["DROP DATABASE IF EXISTS \(name)", "CREATE DATABASE \(name)"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
            process.arguments = ["-q", "-h", socket, "-U", "postgres", "-d", "postgres", "-c", statement]
            try process.run()
            process.waitUntilExit()
        }
        return "postgres://postgres@localhost/\(name)?host=\(socket)"
    }

    func noPostgres(_ scenario: String) {
        report.add(Figure(scenario: scenario, contender: "postgres", metric: "-", value: .nan, unit: "-", note: "not run: give --postgres URL (scripts/bench.sh does)"))
    }

    // S1: bulk appends of 1,000 events, durable.
    func postgresS1(_ batches: [Range<Int>], workload: Workload) async throws {
        guard let url = try postgresDatabase("esbench_s1") else { return noPostgres("S1") }
        let store = try await PostgresEventStore(url: url)
        let events = batches.last?.upperBound ?? 0
        let seconds = try await Measure.seconds {
            for range in batches { _ = try await store.append(workload.appends(range)) }
        }
        await store.close()
        report.add(Figure(scenario: "S1", contender: "postgres", metric: "append", value: Double(events) / seconds, unit: "events/s", note: "\(events) events, \(options.bulkBatch) per append, synchronous_commit on"))
    }

    // S2: 64 tasks of single-event appends, grouped into calls; against the same database
    // with one transaction per event.
    func postgresS2(workload: Workload) async throws {
        guard let url = try postgresDatabase("esbench_s2") else { return noPostgres("S2") }
        let tasks = options.writerTasks
        let perTask = max(1, options.singleEvents * 4 / tasks)
        func run(_ store: PostgresEventStore) async throws -> Double {
            Double(tasks * perTask) / (try await Self.singleEventAppends(store, tasks: tasks, perTask: perTask, workload: workload))
        }
        let grouped = try await PostgresEventStore(url: url)
        let groupedRate = try await run(grouped)
        let commits = grouped.writerStatistics.commits
        await grouped.close()
        report.add(Figure(scenario: "S2", contender: "postgres", metric: "append", value: groupedRate, unit: "events/s",
                       note: "\(tasks) tasks, \(tasks * perTask) single-event appends, \(String(format: "%.1f", Double(tasks * perTask) / Double(max(commits, 1)))) per call"))
        let single = try await PostgresEventStore(url: url, configuration: StoreConfiguration(maximumEventsPerCommit: 1))
        let singleRate = try await run(single)
        await single.close()
        report.add(Figure(scenario: "S2", contender: "postgres-one-per-transaction", metric: "append", value: singleRate, unit: "events/s", note: "the same, one call and transaction per event"))
        report.judge("S2", "PostgreSQL ≥ 10 × one transaction per event", measured: String(format: "%.1f ×", groupedRate / singleRate), groupedRate >= 10 * singleRate)
    }

    // S4: commit to delivery through LISTEN/NOTIFY, in-process and from another process.
    func postgresS4() async throws {
        guard let url = try postgresDatabase("esbench_s4") else { return noPostgres("S4") }
        let store = try await PostgresEventStore(url: url)
        let count = options.latencyEvents / 4
        let inProcess = try await Self.inProcessLatencies(store, count: count, spacing: .milliseconds(2))
        report.add(Figure(scenario: "S4", contender: "postgres", metric: "in-process p50", value: Measure.percentile(inProcess, 0.5) * 1000, unit: "ms", note: "\(count) events, from the append call to delivery"))
        report.add(Figure(scenario: "S4", contender: "postgres", metric: "in-process p99", value: Measure.percentile(inProcess, 0.99) * 1000, unit: "ms"))
        let cross = try await crossProcessLatencies(store, location: url, count: options.crossProcessEvents)
        await store.close()
        let crossP99 = Measure.percentile(cross, 0.99) * 1000
        report.add(Figure(scenario: "S4", contender: "postgres", metric: "cross-process p50", value: Measure.percentile(cross, 0.5) * 1000, unit: "ms", note: "\(cross.count) events appended by another process"))
        report.add(Figure(scenario: "S4", contender: "postgres", metric: "cross-process p99", value: crossP99, unit: "ms"))
        report.judge("S4", "PostgreSQL cross-process p99 ≤ 20 ms", measured: String(format: "%.2f ms", crossP99), crossP99 <= 20)
    }
}

/// The store a child process appends to: a PostgreSQL database for a URL, else a directory.
func openForChild(_ location: String) async throws -> any EventLog {
    if location.hasPrefix("postgres://") { return try await PostgresEventStore(url: location) }
    return try EventStore(path: location, configuration: StoreConfiguration(durability: .noSync))
}
