import Logging
import Synchronization

/// Keeps every message logged through its ``logger``, to check what a component said.
public final class LogCapture: Sendable {
    /// Every entry logged so far, in order.
    public let entries = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])

    public init() {}

    /// A logger that keeps everything, from trace up.
    public var logger: Logger {
        Logger(label: "test") { _ in Handler(capture: self) }
    }

    /// The messages logged at `level`.
    public func messages(_ level: Logger.Level) -> [String] {
        entries.withLock { $0.filter { $0.level == level }.map(\.message) }
    }

    /// Every message logged, each with its metadata.
    public var messages: [String] {
        entries.withLock { $0.map { "\($0.message) \($0.metadata)" } }
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.entries.withLock { $0.append((event.level, "\(event.message)", event.metadata ?? [:])) }
        }
    }
}
