import Foundation

/// S7's light external client: wrk (Debian's `wrk`, a C load generator with a Lua hook), run as a
/// child process over keep-alive connections for a number of seconds, with a cap on the requests
/// it sends (wrk's clock runs to the end of its duration even when its thread stops early, so the
/// cap is a bound, not the measure: a run that reaches it is refused).
struct WrkClient {
    let executable: String

    /// What one run measured.
    struct Outcome {
        let requests: Int
        let rate: Double
        let p50Milliseconds: Double
        let p99Milliseconds: Double
    }

    /// wrk from `ESBENCH_WRK`, or the first `wrk` on the PATH; nil when there is none.
    static func find() -> WrkClient? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["ESBENCH_WRK"] {
            return FileManager.default.isExecutableFile(atPath: path) ? WrkClient(executable: path) : nil
        }
        for directory in (environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = directory + "/wrk"
            if FileManager.default.isExecutableFile(atPath: String(path)) { return WrkClient(executable: String(path)) }
        }
        return nil
    }

    /// Single-event appends (`POST /streams/stream-K`, about 200 bytes of JSON data, the streams
    /// taken in turn) over `connections` connections from one wrk thread for `seconds` seconds,
    /// `pipeline` requests sent at once on each (wrk counts the requests of its script's first
    /// call, and sends the next batch once all their answers came), at most `cap` requests. Throws when wrk fails, when the cap was reached, or when any
    /// answer was not a 2xx or any request failed: a rate of refusals measures nothing.
    func appends(port: Int, connections: Int, pipeline: Int, seconds: Int, cap: Int, streams: Int, eventType: String, directory: String) async throws -> Outcome {
        let script = directory + "/s7-appends.lua"
        try Self.script(cap: cap, streams: streams, pipeline: pipeline, eventType: eventType).write(toFile: script, atomically: true, encoding: .utf8)
        let fields = try await ReportingChild.run(
            "S7: wrk", executable: executable,
            arguments: [
                "--threads", "1", "--connections", String(connections), "--duration", "\(seconds)s", "--timeout", "30s",
                "--script", script, "http://127.0.0.1:\(port)",
            ],
            marker: "S7WRK")
        let line = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\(Int($0.value))" }.joined(separator: " ")
        guard let done = fields["requests"], let micros = fields["duration_us"], micros > 0, let p50 = fields["p50_us"], let p99 = fields["p99_us"] else {
            throw Failure("S7: wrk's report could not be read: \(line)")
        }
        guard fields["capped"] == 0 else { throw Failure("S7: wrk reached its cap of \(cap) requests before \(seconds) s; its rate would be wrong: \(line)") }
        let failed = ["connect", "read", "write", "timeout", "status"].reduce(0) { $0 + (fields[$1] ?? 0) }
        guard failed == 0 else { throw Failure("S7: wrk saw \(Int(failed)) failed requests or non-2xx answers: \(line)") }
        return Outcome(requests: Int(done), rate: done / (micros / 1e6), p50Milliseconds: p50 / 1000, p99Milliseconds: p99 / 1000)
    }

    /// The Lua script: the `pipeline` requests of each call (the workload's shape of event, 200
    /// bytes of data), a stop once `cap` answers have come, and a last line for the benchmark.
    static func script(cap: Int, streams: Int, pipeline: Int, eventType: String) -> String {
        """
        -- esbench S7: single-event appends, one a request, the streams taken in turn.
        local n = 0
        local answered = 0
        local limit = \(cap)
        -- A global, not a local: the last step reads each thread's through thread:get.
        capped = 0
        local threads = {}
        local streams = \(streams)
        local pipeline = \(max(1, pipeline))
        wrk.method = "POST"
        wrk.headers["Content-Type"] = "application/json"

        local one = function()
          local i = n
          n = n + 1
          local data = '{"n":' .. i .. ',"stream":' .. (i % streams) .. ',"kind":"reading","note":"'
          data = data .. string.rep("x", 200 - #data - 2) .. '"}'
          return wrk.format(nil, "/streams/stream-" .. (i % streams), nil, '[{"type":"\(eventType)","data":' .. data .. '}]')
        end

        request = function()
          if pipeline == 1 then return one() end
          local batch = {}
          for k = 1, pipeline do batch[k] = one() end
          return table.concat(batch)
        end

        response = function(status, headers, body)
          answered = answered + 1
          if answered >= limit then
            capped = 1
            wrk.thread:stop()
          end
        end

        setup = function(thread) table.insert(threads, thread) end

        done = function(summary, latency, requests)
          local e = summary.errors
          local stopped = 0
          for _, thread in ipairs(threads) do stopped = stopped + thread:get("capped") end
          io.write(string.format("S7WRK requests=%d duration_us=%d p50_us=%d p99_us=%d connect=%d read=%d write=%d timeout=%d status=%d capped=%d\\n",
            summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
            e.connect, e.read, e.write, e.timeout, e.status, stopped))
        end
        """
    }
}
