import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C for long-running commands: instead of dying mid-write, the command is told and ends
/// cleanly (exit code 130).
enum Interrupts {
    /// Runs `handler` on SIGINT until the returned source is cancelled.
    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
        return source
    }
}
