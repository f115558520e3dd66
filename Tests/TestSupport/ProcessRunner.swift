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
/// Launched through ``ChildProcess``, not Foundation's `Process`.
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
        let outDescriptor = open(outPath, O_WRONLY | O_TRUNC | O_CLOEXEC)
        let errDescriptor = open(errPath, O_WRONLY | O_TRUNC | O_CLOEXEC)
        defer {
            if outDescriptor >= 0 { close(outDescriptor) }
            if errDescriptor >= 0 { close(errDescriptor) }
        }
        guard outDescriptor >= 0, errDescriptor >= 0 else { throw ChildProcess.LaunchError(executable: outPath, errno: errno) }
        let input = try stdin == nil ? (read: ChildProcess.nullInput(), write: -1) : ChildProcess.pipe()
        let exited = AsyncStream<Int32>.makeStream()
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(
                executable, arguments, environment: ChildProcess.environment(environment), directory: directory, stdin: input.read,
                stdout: outDescriptor, stderr: errDescriptor)
        } catch {
            close(input.read)
            if input.write >= 0 { close(input.write) }
            throw error
        }
        close(input.read)
        ChildProcess.onExit(of: pid) { status in
            exited.continuation.yield(status)
            exited.continuation.finish()
        }
        if let stdin {
            let writer = input.write
            // A thread of its own: a child that does not read would block the write.
            let feeder = Thread {
                stdin.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let written = write(writer, bytes.baseAddress?.advanced(by: offset), bytes.count - offset)
                        if written < 0 && errno == EINTR { continue }
                        guard written > 0 else { break }
                        offset += written
                    }
                }
                close(writer)
            }
            feeder.start()
        }
        let description = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        let status: Int32
        do {
            status = try await withTimeout(timeout, "`\(description)` to exit") {
                var iterator = exited.stream.makeAsyncIterator()
                return await iterator.next() ?? -1
            }
        } catch {
            kill(pid, SIGKILL)
            throw error
        }
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
