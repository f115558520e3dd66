import Foundation

/// A child process whose output a test reads while it runs: wait for a line on standard output
/// or standard error, send it a signal, wait for it to exit. Every wait has a timeout, and the
/// child is killed when the value is released. Launched through ``ChildProcess``, not Foundation's
/// `Process`.
public final class RunningProcess: Sendable {
    private struct Output: Sendable {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var exitStatus: Int32?
        var stdoutClosed = false
        var stderrClosed = false
        /// The exit status, once the process has exited and both pipes have been read to the end.
        var status: Int32? { stdoutClosed && stderrClosed ? exitStatus : nil }
    }

    private let output = AwaitableState(Output())
    private let pid: pid_t
    /// The command line, for messages.
    public let commandLine: String

    /// Starts `executable` with `arguments` (standard input empty). Throws
    /// ``ChildProcess/LaunchError``.
    public init(_ executable: URL, _ arguments: [String]) throws {
        commandLine = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        let input = try ChildProcess.nullInput()
        defer { close(input) }
        let stdoutPipe = try ChildProcess.pipe()
        let stderrPipe = try ChildProcess.pipe()
        do {
            pid = try ChildProcess.spawn(
                executable, arguments, environment: ChildProcess.environment(), stdin: input, stdout: stdoutPipe.write,
                stderr: stderrPipe.write)
        } catch {
            for descriptor in [stdoutPipe.read, stdoutPipe.write, stderrPipe.read, stderrPipe.write] { close(descriptor) }
            throw error
        }
        close(stdoutPipe.write)
        close(stderrPipe.write)
        Self.collect(stdoutPipe.read, into: output, bytes: \.stdout, closed: \.stdoutClosed)
        Self.collect(stderrPipe.read, into: output, bytes: \.stderr, closed: \.stderrClosed)
        let output = self.output
        ChildProcess.onExit(of: pid) { status in output.update { $0.exitStatus = status } }
    }

    deinit {
        if !hasExited { kill(pid, SIGKILL) }
    }

    /// Whether the child has exited (and been reaped).
    private var hasExited: Bool { output.withValue { $0.exitStatus != nil } }

    /// Appends what `descriptor` delivers to one part of `output`, which is marked closed at the
    /// end; a thread of its own reads it with plain blocking reads and closes it.
    private static func collect(
        _ descriptor: Int32, into output: AwaitableState<Output>, bytes: WritableKeyPath<Output, [UInt8]> & Sendable,
        closed: WritableKeyPath<Output, Bool> & Sendable
    ) {
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                let chunk = Array(buffer[0..<count])
                output.update { $0[keyPath: bytes].append(contentsOf: chunk) }
            }
            close(descriptor)
            output.update { $0[keyPath: closed] = true }
        }
        reader.start()
    }

    /// The child's process id.
    public var processIdentifier: Int32 { pid }

    /// Standard output so far.
    public var stdout: String { output.withValue { String(decoding: $0.stdout, as: UTF8.self) } }
    /// Standard error so far.
    public var stderr: String { output.withValue { String(decoding: $0.stderr, as: UTF8.self) } }
    /// The complete lines of standard output so far.
    public var stdoutLines: [String] { Self.lines(stdout) }

    /// Waits until standard output holds at least `count` complete lines, and returns them all.
    @discardableResult
    public func waitForStdoutLines(_ count: Int, timeout: Duration = .seconds(30)) async throws -> [String] {
        try await output.wait(timeout, "\(count) line(s) on standard output of `\(commandLine)`") {
            Self.lines(String(decoding: $0.stdout, as: UTF8.self)).count >= count || $0.status != nil
        }
        let lines = stdoutLines
        guard lines.count >= count else {
            throw AwaitFailure(description: "`\(commandLine)` exited (\(exitDescription)) before printing \(count) line(s); stdout: \(stdout) stderr: \(stderr)")
        }
        return lines
    }

    /// Waits until a complete line of standard output satisfies `match`, and returns every line
    /// so far; throws ``AwaitFailure`` when the process exits first.
    @discardableResult
    public func waitForStdoutLine(timeout: Duration = .seconds(30), where match: @escaping @Sendable (String) -> Bool) async throws
        -> [String]
    {
        try await output.wait(timeout, "a matching line on standard output of `\(commandLine)`") {
            Self.lines(String(decoding: $0.stdout, as: UTF8.self)).contains(where: match) || $0.status != nil
        }
        let lines = stdoutLines
        guard lines.contains(where: match) else {
            throw AwaitFailure(description: "`\(commandLine)` exited (\(exitDescription)) before printing the awaited line; stdout: \(stdout) stderr: \(stderr)")
        }
        return lines
    }

    /// Waits until standard error contains `text`.
    public func waitForStderr(containing text: String, timeout: Duration = .seconds(30)) async throws {
        try await output.wait(timeout, "'\(text)' on standard error of `\(commandLine)`") {
            String(decoding: $0.stderr, as: UTF8.self).contains(text) || $0.status != nil
        }
        guard stderr.contains(text) else {
            throw AwaitFailure(description: "`\(commandLine)` exited (\(exitDescription)) without printing '\(text)'; stderr: \(stderr)")
        }
    }

    /// The exit status for messages: "status N" (128 + N for a signal), or "status unknown".
    private var exitDescription: String { output.withValue { $0.exitStatus.map { "status \($0)" } ?? "status unknown" } }

    /// Sends a signal (SIGINT for Ctrl-C).
    public func send(_ signal: Int32) {
        if !hasExited { kill(pid, signal) }
    }

    /// Waits for the process to exit and returns its status; kills it on timeout.
    public func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        do {
            try await output.wait(timeout, "`\(commandLine)` to exit") { $0.status != nil }
        } catch {
            if !hasExited { kill(pid, SIGKILL) }
            throw error
        }
        return output.withValue { $0.status ?? -1 }
    }

    private static func lines(_ text: String) -> [String] {
        var parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        parts.removeLast()  // the text after the last newline is not a complete line
        return parts
    }
}
