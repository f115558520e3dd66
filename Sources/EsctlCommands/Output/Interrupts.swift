import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ctrl-C (SIGINT) and SIGTERM for the commands that run long: instead of dying mid-write, the
/// command is told, finishes what is in flight, says where it stopped, and exits 130 (SIGINT) or
/// 143 (SIGTERM).
public enum Interrupts {
    private static let signalReceived = Atomic<Int32>(0)

    /// The signal received since the process started watching, if any.
    static var received: Int32? {
        let signal = signalReceived.load(ordering: .acquiring)
        return signal == 0 ? nil : signal
    }

    /// The exit status for the signal received: 143 after SIGTERM, 130 otherwise.
    public static var exitStatus: ExitStatus { received == SIGTERM ? .terminated : .interrupted }

    /// Calls `handler` on SIGINT or SIGTERM (the signal is remembered first) until the returned
    /// sources are cancelled.
    public static func onSignals(_ handler: @escaping @Sendable () -> Void = {}) -> SignalWatch {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                signalReceived.store(number, ordering: .releasing)
                handler()
            }
            source.resume()
            sources.append(source)
        }
        return SignalWatch(sources: sources)
    }

    /// Runs `work` in a task that SIGINT and SIGTERM cancel (it sees `CancellationError` at its
    /// next suspension point that checks).
    static func cancellingOnSignals<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await work() }
        let watch = onSignals { task.cancel() }
        defer { watch.cancel() }
        return try await task.value
    }
}

/// The signal handlers of ``Interrupts/onSignals(_:)``, removed by ``cancel()``.
public struct SignalWatch: @unchecked Sendable {
    // @unchecked Sendable: dispatch sources are thread-safe; the array is never changed.
    let sources: [any DispatchSourceSignal]

    /// Stops watching: the handler no longer runs. The signals stay ignored (as
    /// ``Interrupts/onSignals(_:)`` set them): a process that goes on should watch them again.
    public func cancel() {
        for source in sources { source.cancel() }
    }
}
