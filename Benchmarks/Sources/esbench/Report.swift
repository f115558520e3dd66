import Foundation

/// One measured figure.
struct Figure: Sendable {
    let scenario: String
    let contender: String
    let metric: String
    let value: Double
    let unit: String
    var note: String = ""
}

/// A target a scenario is held to, and whether it was met; nil when the run's sizes are not the
/// ones the target names, so the figure only indicates.
struct Verdict: Sendable {
    let scenario: String
    let target: String
    let measured: String
    let met: Bool?
}

/// Everything one run measured.
final class Report: @unchecked Sendable {
    // @unchecked Sendable: filled by the main task only, one scenario after the other.
    var rows: [Figure] = []
    var verdicts: [Verdict] = []
    var settings: [(String, String)] = []

    func add(_ row: Figure) {
        rows.append(row)
        let value = row.value >= 100 ? String(format: "%.0f", row.value) : String(format: "%.3f", row.value)
        FileHandle.standardError.write(Data("  \(row.scenario) \(row.contender): \(row.metric) \(value) \(row.unit) \(row.note)\n".utf8))
    }

    func judge(_ scenario: String, _ target: String, measured: String, _ met: Bool?) {
        verdicts.append(Verdict(scenario: scenario, target: target, measured: measured, met: met))
    }

    func value(_ scenario: String, _ contender: String, _ metric: String) -> Double? {
        rows.last { $0.scenario == scenario && $0.contender == contender && $0.metric == metric }?.value
    }

    /// The table people read.
    func table() -> String {
        var lines: [String] = []
        for (key, value) in settings { lines.append("\(key): \(value)") }
        lines.append("")
        let header = ["scenario", "contender", "metric", "value", "unit", "note"]
        let cells = rows.map { row in
            [row.scenario, row.contender, row.metric, Self.format(row.value), row.unit, row.note]
        }
        lines.append(contentsOf: Self.align([header] + cells))
        lines.append("")
        let verdictCells = verdicts.map { [$0.scenario, $0.target, $0.measured, $0.met.map { $0 ? "met" : "MISSED" } ?? "indicative"] }
        lines.append(contentsOf: Self.align([["scenario", "target", "measured", "verdict"]] + verdictCells))
        return lines.joined(separator: "\n")
    }

    /// The same figures as JSON.
    func json() -> String {
        func quote(_ text: String) -> String {
            let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "\"\(escaped)\""
        }
        let settingsJSON = settings.map { "\(quote($0.0)):\(quote($0.1))" }.joined(separator: ",")
        let rowsJSON = rows.map { row in
            "{\"scenario\":\(quote(row.scenario)),\"contender\":\(quote(row.contender)),\"metric\":\(quote(row.metric)),\"value\":\(row.value.isFinite ? String(row.value) : "null"),\"unit\":\(quote(row.unit)),\"note\":\(quote(row.note))}"
        }.joined(separator: ",")
        let verdictsJSON = verdicts.map { verdict in
            "{\"scenario\":\(quote(verdict.scenario)),\"target\":\(quote(verdict.target)),\"measured\":\(quote(verdict.measured)),\"met\":\(verdict.met.map(String.init) ?? "null")}"
        }.joined(separator: ",")
        return "{\"settings\":{\(settingsJSON)},\"rows\":[\(rowsJSON)],\"targets\":[\(verdictsJSON)]}"
    }

    static func format(_ value: Double) -> String {
        if value >= 1000 { return String(format: "%.0f", value) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.3f", value)
    }

    private static func align(_ rows: [[String]]) -> [String] {
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
    }
}

/// Time and memory measurements.
enum Measure {
    /// Seconds taken by `body`.
    static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return elapsed(since: start)
    }

    static func elapsed(since start: ContinuousClock.Instant) -> Double {
        let duration = ContinuousClock.now - start
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The CPU time this process has used (user and system, all threads), in seconds: a figure
    /// that counts work, not waiting for a core the machine's other load holds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return .nan }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// What a "CPU per event" figure counts, for its note.
    static let cpuNote = "user + system time of all the process's threads over the timed part, per event: steadier than the rate on a shared machine"

    /// The CPU time the children this process has waited for have used (user and system), in
    /// seconds: an external client's (S7's wrk), read before and after it runs.
    static func childCPUSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage) == 0 else { return .nan }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// A line of /proc/self/status, in bytes (VmHWM, VmRSS, RssAnon, RssFile).
    static func status(_ key: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            let number = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return number * 1024
        }
        return 0
    }

    /// Samples the anonymous resident memory (the process's own heap, not the mapped store)
    /// every 10 ms until stopped, keeping the peak.
    final class AnonymousPeak: @unchecked Sendable {
        // @unchecked Sendable: `peak` and `running` are only touched under `lock`.
        private let lock = NSLock()
        private var peak: Double = 0
        private var running = true

        init() {
            let thread = Thread { [self] in
                while true {
                    let now = Measure.status("RssAnon")
                    lock.lock()
                    peak = max(peak, now)
                    let keepGoing = running
                    lock.unlock()
                    if !keepGoing { return }
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
            thread.start()
        }

        /// Stops sampling and returns the peak.
        func stop() -> Double {
            let last = Measure.status("RssAnon")
            lock.lock()
            defer { lock.unlock() }
            running = false
            peak = max(peak, last)
            return peak
        }
    }

    /// The p-th percentile of sorted samples.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))
        return sorted[index]
    }
}
