import Foundation

// esbench: the side-by-side benchmark. `esbench --help` lists the options.
let arguments = Array(CommandLine.arguments.dropFirst())

func value(after flag: String) -> String? {
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func intValue(_ flag: String) -> Int? { value(after: flag).flatMap { Int($0.replacingOccurrences(of: "_", with: "")) } }

if arguments.contains("--help") {
    print("""
        esbench [--json] [--scenarios s1,s2,s3,s4,s5,s6,s7,s8,s9,s10,s11,s12,s13,s14] [--full] [--dir DIR] [--postgres URL]
                [--events N] [--writer-events N] [--single-events N] [--domain-events N]
                [--latency-events N] [--memory-sizes A,B] [--reads N] [--s10-history N] [--http-events N]
                [--http-seconds N] [--http-pipeline N] [--s9-appends N] [--s1-layout-omit ids,types,heads,chunks,fixed-heads,small-heads,tail-table,number-heads]

        Runs each scenario with three contenders side by side (this store, raw LMDB with the same
        schema, SQLite through GRDB), and in S1, S2 and S4 this store on the PostgreSQL cluster
        --postgres names (scripts/bench.sh starts one), and prints a table of figures and targets; --json prints the
        same figures as JSON. The defaults take about 11 minutes (a slow day); --full uses the sizes the
        issue names for S5 (1M and 4M events). S7 runs wrk (its own process) for --http-seconds
        (10) beside AsyncHTTPClient's --http-events requests, when wrk is installed (ESBENCH_WRK
        names another), twice: one request at a time per connection, then --http-pipeline (8,
        2 to 64) requests pipelined per connection. S1's raw-lmdb-layout writes this store's
        layout by plain LMDB calls; --s1-layout-omit leaves tables out of it, to see what each costs
        (fixed-heads: each head at its largest size; small-heads: heads without their pending
        positions; tail-table: those positions in a table of their own; number-heads: heads keyed
        by stream number).
        """)
    exit(0)
}

var options = Options()
if let list = value(after: "--scenarios") { options.scenarios = Set(list.lowercased().split(separator: ",").map(String.init)) }
if arguments.contains("--full") { options.memorySizes = [1_000_000, 4_000_000] }
if let n = intValue("--events") { options.bulkEvents = n }
if let n = intValue("--writer-events") { options.writerEvents = n }
if let n = intValue("--single-events") { options.singleEvents = n }
if let n = intValue("--domain-events") { options.domainEvents = n }
if let n = intValue("--latency-events") { options.latencyEvents = n }
if let n = intValue("--reads") { options.reads = n }
if let n = intValue("--s10-history") { options.s10History = n }
if let n = intValue("--s8-subscribers") { options.s8Subscribers = n }
if let n = intValue("--s8-events") { options.s8Events = n }
if let n = intValue("--http-events") { options.httpEvents = n }
if let n = intValue("--s9-appends") { options.s9AppendsPerTask = max(1, n) }
if let n = intValue("--http-seconds") { options.httpSeconds = max(1, min(n, 3600)) }
if let omitted = value(after: "--s1-layout-omit") { options.layoutOmitted = Set(omitted.split(separator: ",").map(String.init)) }
if let n = intValue("--http-pipeline") { options.httpPipeline = max(2, min(n, 64)) }
if let sizes = value(after: "--memory-sizes") { options.memorySizes = sizes.split(separator: ",").compactMap { Int($0) } }
if let directory = value(after: "--dir") { options.directory = directory }
options.json = arguments.contains("--json")

let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]

if let mode = value(after: "--child") {
    let directory = value(after: "--dir") ?? options.directory
    let count = intValue("--count") ?? 0
    do {
        if mode == "s7-stream" {
            try StreamClient.run(
                port: intValue("--port") ?? 0, connections: intValue("--connections") ?? 64, pipeline: 1,
                seconds: intValue("--http-seconds") ?? 10, streams: intValue("--streams") ?? 1000, eventType: Workload.type)
        } else if mode == "s4-appender" {
            try await Bench.s4Appender(directory: directory, count: count)
        } else if mode.hasPrefix("s10-") {
            try await Bench.s10Child(mode, directory: directory, count: count)
        } else {
            try await Bench.memoryChild(mode, directory: directory, count: count, options: options)
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("esbench child \(mode) failed: \(error)\n".utf8))
        exit(1)
    }
}

let report = Report()
let machine = ProcessInfo.processInfo
report.settings = [
    ("date", ISO8601DateFormatter().string(from: Date())),
    ("machine", "\(machine.processorCount) cores, \(machine.physicalMemory / 1_073_741_824) GiB, \(machine.operatingSystemVersionString)"),
    ("command", "esbench " + arguments.joined(separator: " ")),
]
let bench = Bench(options: options, report: report, executable: executable)
try? FileManager.default.createDirectory(atPath: options.directory, withIntermediateDirectories: true)
let started = ContinuousClock.now
for scenario in ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14"] where options.scenarios.contains(scenario) {
    FileHandle.standardError.write(Data("running \(scenario.uppercased())...\n".utf8))
    do {
        switch scenario {
        case "s1": try await bench.s1()
        case "s2": try await bench.s2()
        case "s3": try await bench.s3()
        case "s4": try await bench.s4()
        case "s5": try await bench.s5()
        case "s7": try await bench.s7()
        case "s8": try await bench.s8()
        case "s9": try await bench.s9()
        case "s10": try await bench.s10()
        case "s11": try await bench.s11()
        case "s12": try await bench.s12()
        case "s13": try await bench.s13()
        case "s14": try await bench.s14()
        default: try await bench.s6()
        }
    } catch {
        FileHandle.standardError.write(Data("\(scenario) failed: \(error)\n".utf8))
        report.judge(scenario.uppercased(), "runs", measured: "failed: \(error)", false)
    }
}
report.settings.append(("duration", String(format: "%.0f s", Measure.elapsed(since: started))))
try? FileManager.default.removeItem(atPath: options.directory)
print(options.json ? report.json() : report.table())
