// S15: the gRPC face against UmaDB itself, side by side in one run, one client for both
// (grpc-swift 2 and the generated DCB client). Each server runs on a fresh directory, durable
// (UmaDB syncs its file on every commit; our store at durability full), over loopback, each in a
// process of its own: ours is this executable again in its `--serve-ours` mode (the face
// `esctl serve --grpc-port` runs), UmaDB's is `umadb --listen`.
//   grpcbench --umadb PATH [--scale N] [--only TEXT] [--server ours|umadb]
//                                          (scripts/grpc-bench.sh runs it; --only runs the
//                                          scenarios whose names contain TEXT)
//   grpcbench --connect PORT [--scale N] [--only TEXT]
//                                          (the scenarios against a server already running,
//                                          to profile it alone)
//   grpcbench --serve-ours PORT DIR        (what the benchmark starts for ours)
// Prints one line per scenario and server, then the table of ratios (ours / UmaDB's).
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCServer

@main
struct GRPCBench {
    static func main() async throws {
        let arguments = CommandLine.arguments
        if arguments.count == 4, arguments[1] == "--serve-ours", let port = Int(arguments[2]) {
            try await OurServer.serve(port: port, path: arguments[3])
            return
        }
        let options = try Options(arguments.dropFirst())
        if let port = options.connect {
            // A server already running (for profiling it alone): no table.
            let report: @Sendable (String, Double) -> Void = { name, value in
                FileHandle.standardOutput.write(Data("given\t\(name)\t\(Int(value)) events/s\n".utf8))
            }
            _ = try await Scenarios(url: port, scale: options.scale, only: options.only).run(report: report)
            return
        }
        var results: [String: [String: Double]] = [:]
        let this = Bundle.main.executablePath ?? arguments[0]
        for server in [ServerKind.ours(this), .umadb(options.umadb)] where options.server.map({ $0 == server.name }) ?? true {
            let figures: [String: Double]
            let report: @Sendable (String, Double) -> Void = { name, value in
                // Unbuffered: each figure shows as it is measured.
                FileHandle.standardOutput.write(Data("\(server.name)\t\(name)\t\(Int(value)) events/s\n".utf8))
            }
            let running = try await RunningServer.start(server)
            defer { running.stop() }
            figures = try await Scenarios(url: running.port, scale: options.scale, only: options.only).run(report: report)
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
    /// Only the scenarios whose names contain it (`--only TEXT`); nil: all.
    var only: String?
    /// Only this server (`--server ours|umadb`); nil: both.
    var server: String?
    /// The port of a server already running on loopback, to run against instead (`--connect PORT`).
    var connect: Int?

    init(_ arguments: ArraySlice<String>) throws {
        var rest = arguments
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw BenchError("\(flag) needs a value") }
            switch flag {
            case "--umadb": umadb = value
            case "--scale": scale = Double(value) ?? 1
            case "--only": only = value
            case "--server": server = value
            case "--connect": connect = Int(value)
            default: throw BenchError("unknown option \(flag)")
            }
        }
        guard !umadb.isEmpty || connect != nil else { throw BenchError("usage: grpcbench --umadb PATH [--scale N] [--only TEXT] [--server ours|umadb] | --connect PORT ...") }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
