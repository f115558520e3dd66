import Apps
import Commands
import EventStore
import Foundation

/// S10: a command's cost against the history behind it. A workout stream of `history` events
/// (appended as an import would, with no snapshot) beside one of 10; then, each in a process of
/// its own (peak memory never falls): the first command on the long stream (it folds the whole
/// stream and writes a snapshot), then commands on the long stream, then on the short one.
extension Bench {
    func s10() async throws {
        let path = directory("s10-store")
        let history = options.s10History
        _ = try runChild(["--child", "s10-fill", "--dir", path, "--count", String(history)])
        var figures: [String: (seconds: Double, rss: Double)] = [:]
        for mode in ["s10-first", "s10-long", "s10-short"] {
            let output = try runChild(["--child", mode, "--dir", path, "--count", String(options.s10Commands)])
            let values = output.split(separator: " ").compactMap { Double($0) }
            guard values.count == 2 else { throw Failure("\(mode) printed '\(output)'") }
            figures[mode] = (values[0], values[1])
        }
        cleanUp(path)
        func add(_ mode: String, _ metric: String, _ note: String) {
            guard let figure = figures[mode] else { return }
            report.add(Figure(scenario: "S10", contender: "eventstore", metric: "\(metric) time", value: figure.seconds * 1000, unit: "ms", note: note))
            report.add(Figure(scenario: "S10", contender: "eventstore", metric: "\(metric) peak RSS", value: figure.rss / 1_048_576, unit: "MiB", note: note))
        }
        add("s10-first", "first command, \(history) events behind, no snapshot", "folds the whole stream once, writes a snapshot")
        add("s10-long", "command, \(history) events behind", "median of \(options.s10Commands), after the snapshot")
        add("s10-short", "command, 10 events behind", "median of \(options.s10Commands)")
        if let long = figures["s10-long"], let short = figures["s10-short"] {
            report.judge("S10", "time with \(history) events behind ≤ 1.5 × with 10", measured: String(format: "%.2f ×", long.seconds / short.seconds), long.seconds <= 1.5 * short.seconds)
            report.judge("S10", "peak memory with \(history) events behind ≤ 1.2 × with 10", measured: String(format: "%.2f ×", long.rss / short.rss), long.rss <= 1.2 * short.rss)
        }
    }

    /// The children of S10. `s10-fill` writes the two streams; the others run `count` commands
    /// and print "MEDIAN_SECONDS PEAK_RSS_BYTES" (the first prints the first command's time).
    static func s10Child(_ mode: String, directory: String, count: Int) async throws {
        if mode == "s10-fill" {
            let store = try EventStore(path: directory, configuration: StoreConfiguration(durability: .noSync, initialMapSize: 1 << 30))
            defer { store.close() }
            let start = [try GoalSet(goal: 10_000_000).newEvent(), try WorkoutStarted().newEvent()]
            _ = try await store.append(to: AppStreams.fitness("long"), events: start)
            _ = try await store.append(to: AppStreams.fitness("short"), events: start)
            let step = try PedometerUpdated(steps: 0, distance: 1).newEvent()
            var written = 2
            while written < count {
                let batch = min(10_000, count - written)
                _ = try await store.append(to: AppStreams.fitness("long"), events: Array(repeating: step, count: batch))
                written += batch
            }
            _ = try await store.append(to: AppStreams.fitness("short"), events: Array(repeating: step, count: 8))
            return
        }
        let store = try EventStore(path: directory, configuration: StoreConfiguration(durability: .noSync, upcasters: AppCatalog.upcasters))
        defer { store.close() }
        let backend = try AppBackend(store: store)
        let user = mode == "s10-short" ? "short" : "long"
        var times: [Double] = []
        for _ in 0..<(mode == "s10-first" ? 1 : max(1, count)) {
            let seconds = try await Measure.seconds { _ = try await backend.fitness(.walk(steps: 0, distance: 1), user: user) }
            times.append(seconds)
        }
        times.sort()
        print("\(times[times.count / 2]) \(Measure.status("VmHWM"))")
    }
}
