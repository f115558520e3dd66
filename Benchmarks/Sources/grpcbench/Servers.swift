import EventStore
import Foundation
import GRPCServer
import Logging

/// A server to measure, each a process of its own: ours (this benchmark's executable again, in
/// its `--serve-ours` mode: the gRPC face `esctl serve --grpc-port` runs, on a store at
/// durability full) or UmaDB's own (`umadb --listen`).
enum ServerKind {
    case ours(String)
    case umadb(String)

    var name: String {
        switch self {
        case .ours: return "ours"
        case .umadb: return "umadb"
        }
    }
}

/// A server process on a fresh directory and a free loopback port, stopped with SIGTERM.
final class RunningServer: @unchecked Sendable {
    // Touched only by the benchmark's main task (start, then stop): no concurrent access.
    let process: Process
    let directory: URL
    let port: Int

    private init(process: Process, directory: URL, port: Int) {
        self.process = process
        self.directory = directory
        self.port = port
    }

    static func start(_ kind: ServerKind) async throws -> RunningServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grpcbench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try freePort()
        let process = Process()
        let log = directory.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        let ready: String
        switch kind {
        case let .ours(path):
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["--serve-ours", "\(port)", directory.appendingPathComponent("store").path]
            ready = OurServer.readyLine
        case let .umadb(path):
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["--listen", "127.0.0.1:\(port)", "--db-path", directory.appendingPathComponent("uma").path]
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("uma"), withIntermediateDirectories: true)
            ready = "UmaDB is listening"
        }
        try process.run()
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: log, encoding: .utf8), text.contains(ready) {
                return RunningServer(process: process, directory: directory, port: port)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw BenchError("\(kind.name) did not say it listens within 30 s: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// Stops the server: SIGINT (UmaDB's server stops on it; it ignores SIGTERM), then SIGKILL
    /// when it still runs 10 s later.
    func stop() {
        kill(process.processIdentifier, SIGINT)
        for _ in 0..<100 where process.isRunning { usleep(100_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A port nobody listens on now (bound to 0, read, closed).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw BenchError("bind failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Our gRPC face, served by this process in its `--serve-ours PORT DIR` mode: a fresh store at
/// durability full, the face `esctl serve --grpc-port` runs, until SIGINT or SIGTERM.
enum OurServer {
    /// What the server prints once it listens.
    static let readyLine = "grpcbench: ours is listening"

    static func serve(port: Int, path: String) async throws {
        let store = try EventStore(path: path, configuration: StoreConfiguration(durability: .full, initialMapSize: 4 << 30))
        var options = GRPCOptions(port: port)
        options.limits = GRPCLimits(maxSubscribers: 1024)
        var logger = Logger(label: "grpcbench")
        logger.logLevel = .warning
        let face = GRPCFace(store: store, options: options, logger: logger) { _, _ in
            FileHandle.standardError.write(Data((readyLine + "\n").utf8))
        }
        let serving = Task { try await face.run() }
        // Stopped by a signal: the face drains, then the store closes.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let (stop, stopping) = AsyncStream<Void>.makeStream()
        let sources = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0) }
        for source in sources {
            source.setEventHandler { stopping.finish() }
            source.resume()
        }
        for await _ in stop {}
        withExtendedLifetime(sources) {}
        serving.cancel()
        _ = await serving.result
        await store.close()
    }
}
