// S15: the gRPC face against UmaDB itself, side by side in one run, one client for both
// (grpc-swift 2 and the generated DCB client). Each server runs on a fresh directory, durable
// (UmaDB syncs its file on every commit; our store at durability full), over loopback: ours in
// this process (the face `esctl serve --grpc-port` runs), UmaDB's as its own process.
//   grpcbench --umadb PATH [--scale N]     (scripts/grpc-bench.sh runs it)
// Prints one line per scenario and server, then the table of ratios (ours / UmaDB's).
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCServer

@main
struct GRPCBench {
    static func main() async throws {
        let options = try Options(CommandLine.arguments.dropFirst())
        var results: [String: [String: Double]] = [:]
        for server in [ServerKind.ours, .umadb(options.umadb)] {
            let figures: [String: Double]
            let report: @Sendable (String, Double) -> Void = { name, value in
                // Unbuffered: each figure shows as it is measured.
                FileHandle.standardOutput.write(Data("\(server.name)\t\(name)\t\(Int(value)) events/s\n".utf8))
            }
            if case .umadb = server {
                let running = try await RunningServer.start(server)
                defer { running.stop() }
                figures = try await Scenarios(url: running.port, scale: options.scale).run(report: report)
            } else {
                let ours = try await OurServer.start()
                figures = try await Scenarios(url: ours.port, scale: options.scale).run(report: report)
                await ours.stop()
            }
            results[server.name] = figures
        }
        print("")
        print("| scenario | ours (events/s) | UmaDB (events/s) | ours / UmaDB |")
        print("|---|---:|---:|---:|")
        for name in Scenarios.names {
            let ours = results["ours"]?[name] ?? 0
            let theirs = results["umadb"]?[name] ?? 0
            print("| \(name) | \(Int(ours)) | \(Int(theirs)) | \(theirs > 0 ? String(format: "%.2f", ours / theirs) : "-") × |")
        }
    }
}

struct Options {
    var umadb = ""
    /// Multiplies every count (1: about a minute a server on 2 cores).
    var scale = 1.0

    init(_ arguments: ArraySlice<String>) throws {
        var rest = arguments
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw BenchError("\(flag) needs a value") }
            switch flag {
            case "--umadb": umadb = value
            case "--scale": scale = Double(value) ?? 1
            default: throw BenchError("unknown option \(flag)")
            }
        }
        guard !umadb.isEmpty else { throw BenchError("usage: grpcbench --umadb PATH [--scale N]") }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
