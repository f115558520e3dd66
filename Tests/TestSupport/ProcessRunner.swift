import Foundation

/// What a finished child process left behind.
public struct ProcessOutput: Sendable, CustomStringConvertible {
    /// The exit status (or 128 + signal when killed).
    public let status: Int32
    /// Everything it wrote to standard output.
    public let stdout: String
    /// Everything it wrote to standard error.
    public let stderr: String

    /// Standard output split into lines, without the empty line after the final newline.
    public var lines: [String] {
        stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }

    public var description: String { "status \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
}

/// Runs executables for end-to-end tests, with a timeout so a stuck child never hangs the suite.
public enum ProcessRunner {
    /// The directory that holds the package's built products (`esctl` among them): the directory
    /// of the running test binary, or `$ESCTL_PRODUCTS` when set.
    public static var productsDirectory: URL {
        if let override = ProcessInfo.processInfo.environment["ESCTL_PRODUCTS"] {
            return URL(fileURLWithPath: override)
        }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable)
        // On Linux the test binary sits in the products directory; on macOS it is inside an .xctest bundle.
        while url.pathComponents.count > 1 && !FileManager.default.fileExists(atPath: url.appendingPathComponent("esctl").path) {
            url.deleteLastPathComponent()
        }
        return url
    }

    /// The built `esctl`.
    public static var esctl: URL { productsDirectory.appendingPathComponent("esctl") }

    /// Runs `executable` with `arguments`, feeding `stdin`, and waits at most `timeout` for it to
    /// exit; on timeout the child is killed and ``TimeoutError`` is thrown.
    public static func run(
        _ executable: URL, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
        directory: String? = nil, timeout: Duration = .seconds(60)
    ) async throws -> ProcessOutput {
        let scratch = try TemporaryDirectory(prefix: "esctl-run")
        let outPath = scratch.appending("stdout")
        let errPath = scratch.appending("stderr")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "ESCTL_DB")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let outHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let errHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardOutput = outHandle
        process.standardError = errHandle
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { finished in
            // As a shell reports it: a process ended by a signal has the status 128 + the signal.
            let status = finished.terminationReason == .uncaughtSignal ? 128 + finished.terminationStatus : finished.terminationStatus
            exited.continuation.yield(status)
            exited.continuation.finish()
        }
        try process.run()
        if let stdin {
            let writer = input.fileHandleForWriting
            DispatchQueue.global().async {
                try? writer.write(contentsOf: stdin)
                try? writer.close()
            }
        }
        let description = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        let status: Int32
        do {
            status = try await withTimeout(timeout, "`\(description)` to exit") {
                var iterator = exited.stream.makeAsyncIterator()
                return await iterator.next() ?? -1
            }
        } catch {
            process.terminate()
            kill(process.processIdentifier, SIGKILL)
            throw error
        }
        try? outHandle.close()
        try? errHandle.close()
        let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return ProcessOutput(status: status, stdout: stdout, stderr: stderr)
    }

    /// Runs the built `esctl` with `--db store` added (before a `--`, after which it would be
    /// taken as an argument).
    public static func esctl(
        _ arguments: [String], db: String, stdin: Data? = nil, timeout: Duration = .seconds(60)
    ) async throws -> ProcessOutput {
        var arguments = arguments
        arguments.insert(contentsOf: ["--db", db], at: arguments.firstIndex(of: "--") ?? arguments.endIndex)
        return try await run(esctl, arguments, stdin: stdin, timeout: timeout)
    }
}
