import CChildProcess
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starting and awaiting child processes without Foundation's `Process`, whose launch on Linux
/// reads past a readdir buffer while it lists /proc/self/fd and crashes a test process that has
/// many descriptors open (NIO, servers). The launch itself is C (`child_process_spawn`).
public enum ChildProcess {
    /// A launch that failed: the errno of what failed (dup, chdir, exec, ...).
    public struct LaunchError: Error, CustomStringConvertible {
        public let executable: String
        public let errno: Int32
        public var description: String { "Cannot start \(executable): \(String(cString: strerror(errno)))." }
    }

    /// Starts `executable` with `arguments` and `environment` in `directory`, its standard
    /// descriptors being `stdin`, `stdout` and `stderr` (the caller closes its own copies).
    /// Returns the child's id. Throws ``LaunchError``.
    public static func spawn(
        _ executable: URL, _ arguments: [String], environment: [String: String], directory: String? = nil,
        stdin: Int32, stdout: Int32, stderr: Int32
    ) throws -> pid_t {
        let path = executable.path
        let argv = CStrings([path] + arguments)
        let envp = CStrings(environment.map { "\($0.key)=\($0.value)" })
        defer {
            argv.free()
            envp.free()
        }
        var pid: pid_t = 0
        let error = directory.withOptionalCString { directory in
            child_process_spawn(path, argv.pointers, envp.pointers, directory, stdin, stdout, stderr, &pid)
        }
        guard error == 0 else { throw LaunchError(executable: path, errno: error) }
        return pid
    }

    /// Waits for `pid` on a thread of its own and calls `handler` with its status as a shell
    /// reports it: the exit code, or 128 + the signal that ended it.
    public static func onExit(of pid: pid_t, _ handler: @escaping @Sendable (Int32) -> Void) {
        let waiter = Thread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else {
                    handler(-1)
                    return
                }
            }
            let signal = status & 0x7f
            handler(signal == 0 ? (status >> 8) & 0xff : 128 + signal)
        }
        waiter.start()
    }

    /// The environment children get: this process's, without `ESCTL_DB` (each test names its
    /// store), with `overrides` applied.
    public static func environment(_ overrides: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "ESCTL_DB")
        for (key, value) in overrides { environment[key] = value }
        return environment
    }

    /// A pipe whose both ends are closed on exec (the child gets its end through dup2).
    public static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        let error = child_process_pipe(&ends)
        guard error == 0 else { throw LaunchError(executable: "pipe", errno: error) }
        return (ends[0], ends[1])
    }

    /// /dev/null opened for reading, closed on exec.
    public static func nullInput() throws -> Int32 {
        let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw LaunchError(executable: "/dev/null", errno: errno) }
        return descriptor
    }
}

/// NULL-terminated C string arrays for execve, freed by ``free()``.
private struct CStrings {
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    let count: Int

    init(_ strings: [String]) {
        count = strings.count
        pointers = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
        pointers[strings.count] = nil
    }

    func free() {
        for index in 0..<count { Glibc.free(pointers[index]) }
        pointers.deallocate()
    }
}

extension Optional where Wrapped == String {
    fileprivate func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        switch self {
        case let .some(string): return string.withCString { body($0) }
        case .none: return body(nil)
        }
    }
}
