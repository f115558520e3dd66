import Apps
import AsyncHTTPClient
import EventStore
import Foundation
import Logging
import HTTPServer
import NIOCore
import NIOHTTP1
import Projections

extension Bench {
    // MARK: S7 appends over HTTP

    /// S7: 64 concurrent HTTP/1.1 connections over loopback, each making single-event durable
    /// appends (`POST /streams/{stream}`, one event a request) against an in-process server on a
    /// fresh store, compared with S2's in-process figure of the same run (target ≥ 0.5 ×). Without
    /// S2 in the run, it measures S2's in-process appends itself first.
    func s7() async throws {
        let workload = Workload(streams: options.streams)
        let tasks = options.writerTasks
        let perTask = max(1, options.httpEvents / tasks)
        let inProcess = try await s2Figure(workload: workload)

        let storePath = directory("s7-store")
        let store = try EventStore(path: storePath, configuration: StoreConfiguration(durability: .full, initialMapSize: 1 << 30, upcasters: AppCatalog.upcasters))
        defer {
            store.close()
            cleanUp(storePath)
        }
        // No projections: S2 runs none either, so the two differ by HTTP alone.
        let runner = try await ProjectionRunner(store: store, projections: [])
        // The access log off (warning), as `esctl serve --log-level warning`: a line per request
        // to standard error would be measured too.
        var logger = Logger(label: "esbench.s7")
        logger.logLevel = .warning
        let server = try Server(store: store, runner: runner, apps: AppCatalog.modules, options: ServerOptions(port: 0), logger: logger)
        let port = PortBox()
        let serving = Task {
            try await server.application { _, bound in await port.set(bound) }.runService(gracefulShutdownSignals: [])
        }
        defer { serving.cancel() }
        let bound = try await port.wait()

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: tasks)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let base = "http://127.0.0.1:\(bound)"
        // The route of issue 20; on a branch without it, the apps' chat route records one event a
        // request the same way (through the command handler), and the note says so.
        let route = try await Self.probe(client, base: base) ? "/streams/" : "/apps/chat/say"
        var cpu = Measure.cpuSeconds()
        let seconds: Double
        do {
            seconds = try await Measure.seconds {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<tasks {
                        group.addTask {
                            for i in 0..<perTask {
                                let n = task * perTask + i
                                try await Self.append(client, base: base, route: route, n: n, workload: workload)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        cpu = Measure.cpuSeconds() - cpu
        try await client.shutdown()
        let total = perTask * tasks
        let rate = Double(total) / seconds
        let note = route == "/streams/" ? "POST /streams/{stream}" : "POST /apps/chat/say (POST /streams/{stream} not served on this build)"
        report.add(Figure(scenario: "S7", contender: "eventstore-http", metric: "append", value: rate, unit: "events/s",
                          note: "\(tasks) connections of AsyncHTTPClient in this process, \(total) single-event appends, durable, \(note)"))
        report.add(Figure(scenario: "S7", contender: "eventstore-http", metric: "CPU per event", value: cpu / Double(total) * 1e6, unit: "µs",
                          note: "the server and AsyncHTTPClient together: one process"))
        report.judge("S7", "≥ 0.5 × S2 in process (AsyncHTTPClient in process)", measured: String(format: "%.2f ×", rate / inProcess), rate >= 0.5 * inProcess)

        // The same appends from wrk, a client in C of its own process, whose cost per request is
        // small: the server's share of the two cores is then what is measured.
        guard route == "/streams/" else { return }
        guard let wrk = WrkClient.find() else {
            report.judge("S7", "≥ 0.5 × S2 in process (wrk)", measured: "wrk not installed (scripts/bench.sh installs it)", nil)
            return
        }
        try await wrkRun(wrk, port: bound, connections: tasks, pipeline: 1, workload: workload, inProcess: inProcess)
        // HTTP/1.1 pipelining (RFC 9112, 9.3.2): each connection sends its next requests without
        // waiting for the answers before them, as a client streaming appends over few
        // connections would; still one event a request, each answered in order.
        try await wrkRun(wrk, port: bound, connections: tasks, pipeline: options.httpPipeline, workload: workload, inProcess: inProcess)
        // The same appends over POST /append/stream: a request per connection, a line per
        // event, one append in flight on each (the concurrency of the runs above).
        try await streamRun(port: bound, connections: tasks, workload: workload, inProcess: inProcess, store: store)
    }

    /// S7's appends over `POST /append/stream` from esbench's stream client (its own process,
    /// ``StreamClient``), its figures and its verdict added to the report. Throws when the client
    /// fails, or when the store did not gain exactly one event per answer (an answer was an error).
    private func streamRun(port: Int, connections: Int, workload: Workload, inProcess: Double, store: EventStore) async throws {
        let contender = "eventstore-http-stream"
        // wrk leaves requests in flight when its time is up, and the server still commits them:
        // the head is read once it has settled (no change for 0.3 s; 10 s at most).
        var before = try store.headPosition()
        for _ in 0..<33 {
            try await Task.sleep(for: .milliseconds(300))
            let now = try store.headPosition()
            if now == before { break }
            before = now
        }
        let serverCPU = Measure.cpuSeconds()
        let clientCPU = Measure.childCPUSeconds()
        let fields = try await ReportingChild.run(
            "S7: the stream client", executable: executable,
            arguments: [
                "--child", "s7-stream", "--port", String(port), "--connections", String(connections), "--http-seconds", String(options.httpSeconds),
                "--streams", String(workload.streams),
            ],
            marker: "S7STREAM")
        let line = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\(Int($0.value))" }.joined(separator: " ")
        guard let answers = fields["answers"], let total = fields["total"], let micros = fields["duration_us"], micros > 0,
            let p50 = fields["p50_us"], let p99 = fields["p99_us"]
        else { throw Failure("S7: the stream client's report could not be read: \(line)") }
        let written = try store.headPosition() - before
        guard Double(written) == total else {
            throw Failure("S7: the stream client read \(Int(total)) answers but \(written) events were written: some answers were errors")
        }
        let rate = answers / (micros / 1e6)
        let perAnswer = 1e6 / max(total, 1)
        report.add(Figure(scenario: "S7", contender: contender, metric: "append", value: rate, unit: "events/s",
                          note: "\(connections) POST /append/stream requests of esbench's stream client (its own process), one append in flight on each, for \(options.httpSeconds) s, \(Int(answers)) single-event appends, durable"))
        report.add(Figure(scenario: "S7", contender: contender, metric: "latency p50 / p99", value: p50 / 1000, unit: "ms",
                          note: String(format: "p99 %.3f ms, line sent to answer read", p99 / 1000)))
        report.add(Figure(scenario: "S7", contender: contender, metric: "CPU per event, server", value: (Measure.cpuSeconds() - serverCPU) * perAnswer, unit: "µs",
                          note: "this process: the server, its store and writer"))
        report.add(Figure(scenario: "S7", contender: contender, metric: "CPU per event, client", value: (Measure.childCPUSeconds() - clientCPU) * perAnswer, unit: "µs",
                          note: "the client's own process"))
        report.judge("S7", "≥ 0.5 × S2 in process (POST /append/stream)", measured: String(format: "%.2f ×", rate / inProcess), rate >= 0.5 * inProcess)
    }

    /// One wrk run of S7's appends, `pipeline` requests in flight per connection, its figures
    /// and its verdict added to the report.
    private func wrkRun(_ wrk: WrkClient, port: Int, connections: Int, pipeline: Int, workload: Workload, inProcess: Double) async throws {
        let contender = pipeline > 1 ? "eventstore-http-wrk-pipelined" : "eventstore-http-wrk"
        let how = pipeline > 1 ? "\(pipeline) requests pipelined per connection" : "one request at a time per connection"
        let serverCPU = Measure.cpuSeconds()
        let clientCPU = Measure.childCPUSeconds()
        let outcome = try await wrk.appends(
            port: port, connections: connections, pipeline: pipeline, seconds: options.httpSeconds, cap: options.httpSeconds * 100_000,
            streams: workload.streams, eventType: Workload.type, directory: directory("s7-wrk"))
        let perRequest = 1e6 / Double(max(outcome.requests, 1))
        report.add(Figure(scenario: "S7", contender: contender, metric: "append", value: outcome.rate, unit: "events/s",
                          note: "\(connections) keep-alive connections of wrk (one thread, its own process), \(how), for \(options.httpSeconds) s, \(outcome.requests) single-event appends, durable, POST /streams/{stream}"))
        // wrk times a request from its batch's send: pipelined, it reports no latencies.
        if pipeline == 1 {
            report.add(Figure(scenario: "S7", contender: contender, metric: "latency p50 / p99", value: outcome.p50Milliseconds, unit: "ms",
                              note: String(format: "p99 %.3f ms, as wrk measures them", outcome.p99Milliseconds)))
        }
        report.add(Figure(scenario: "S7", contender: contender, metric: "CPU per event, server", value: (Measure.cpuSeconds() - serverCPU) * perRequest, unit: "µs",
                          note: "this process: the server, its store and writer"))
        report.add(Figure(scenario: "S7", contender: contender, metric: "CPU per event, wrk", value: (Measure.childCPUSeconds() - clientCPU) * perRequest, unit: "µs",
                          note: "the client's own process"))
        let target = pipeline > 1 ? "≥ 0.5 × S2 in process (wrk, \(pipeline) pipelined)" : "≥ 0.5 × S2 in process (wrk)"
        report.judge("S7", target, measured: String(format: "%.2f ×", outcome.rate / inProcess), outcome.rate >= 0.5 * inProcess)
    }

    /// S2's in-process figure of this run, or one measured now.
    private func s2Figure(workload: Workload) async throws -> Double {
        if let figure = report.rows.first(where: { $0.scenario == "S2" && $0.contender == "eventstore" }) { return figure.value }
        let storePath = directory("s7-s2-store")
        let store = try EventStore(path: storePath, configuration: StoreConfiguration(durability: .full, initialMapSize: 1 << 30))
        let perTask = max(1, options.writerEvents / options.writerTasks)
        let seconds = try await Self.singleEventAppends(store, tasks: options.writerTasks, perTask: perTask, workload: workload)
        await store.close()
        cleanUp(storePath)
        let rate = Double(perTask * options.writerTasks) / seconds
        report.add(Figure(scenario: "S7", contender: "eventstore-in-process", metric: "append", value: rate, unit: "events/s", note: "S2's measure, for S7"))
        return rate
    }

    /// Whether the server answers POST /streams/{stream} (201).
    private static func probe(_ client: HTTPClient, base: String) async throws -> Bool {
        var request = HTTPClientRequest(url: base + "/streams/s7-probe")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"[{"type":"Probe","data":{}}]"#))
        let response = try await client.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return response.status == .created
    }

    private static func append(_ client: HTTPClient, base: String, route: String, n: Int, workload: Workload) async throws {
        let data = String(decoding: workload.data(n), as: UTF8.self)
        var request: HTTPClientRequest
        if route == "/streams/" {
            request = HTTPClientRequest(url: base + "/streams/" + workload.streamName(n % workload.streams))
            request.body = .bytes(ByteBuffer(string: #"[{"type":"\#(Workload.type)","data":\#(data)}]"#))
        } else {
            request = HTTPClientRequest(url: base + route)
            request.body = .bytes(ByteBuffer(string: #"{"user":"u\#(n % 64)","room":"r\#(n % workload.streams)","text":"message \#(n)"}"#))
        }
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let response = try await client.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .created else {
            throw Failure("S7: \(route) answered \(response.status.code)")
        }
    }
}

/// The port the server bound, handed from its onListening callback to the benchmark.
actor PortBox {
    private var port: Int?
    private var waiters: [CheckedContinuation<Int, Never>] = []

    func set(_ port: Int) {
        self.port = port
        waiters.forEach { $0.resume(returning: port) }
        waiters = []
    }

    /// The port, once bound (the server binds within a second; bounded by the caller's run).
    func wait() async throws -> Int {
        if let port { return port }
        return await withCheckedContinuation { waiters.append($0) }
    }
}
