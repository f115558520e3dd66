import Commands
import EventStore
import Foundation
import Synchronization
import WireFormat

#if canImport(Glibc)
import Glibc
#endif

/// Buffered standard output that can be flushed at will (per event for `subscribe`), and one-line
/// messages on standard error.
public enum Console {
    private static let buffer = Mutex<[UInt8]>([])
    private static let flushThreshold = 64 << 10

    /// Writes `line`, made safe for a terminal (``TerminalText``), and a newline to standard
    /// output (buffered). For text meant for people; JSON goes through ``printJSON(_:)``.
    public static func print(_ line: String) {
        append(TerminalText.safe(line))
    }

    /// Writes a line of JSON as it is (JSON escapes what it must; a program reads it).
    public static func printJSON(_ line: String) {
        append(line)
    }

    /// Writes an event the way `read`, `replay` and `subscribe` print it.
    public static func printEvent(_ event: RecordedEvent, json: Bool) {
        json ? printJSON(EventLines.json(event)) : print(EventLines.text(event))
    }

    private static func append(_ line: String) {
        let shouldFlush = buffer.withLock { bytes in
            bytes.append(contentsOf: line.utf8)
            bytes.append(0x0A)
            return bytes.count >= flushThreshold
        }
        if shouldFlush { flush() }
    }

    /// Pushes buffered standard output to its reader now.
    public static func flush() {
        buffer.withLock { bytes in
            writeAll(bytes, to: STDOUT_FILENO)
            bytes.removeAll(keepingCapacity: true)
        }
    }

    /// The name this program calls itself (``Esctl/run(name:version:apps:subcommands:serveExtras:)``,
    /// `esctl` by default): what each line it writes on standard error begins with.
    public static var toolName: String { BuiltInApps.toolName }

    /// Writes `message` as one line to standard error, prefixed with the program's name
    /// (`esctl: `; made safe for a terminal: it may quote names and text from the input or the log).
    public static func error(_ message: String) {
        flush()
        writeAll(Array("\(toolName): \(TerminalText.safe(message))\n".utf8), to: STDERR_FILENO)
    }

    /// Writes a line to standard error as it is (progress, notices).
    public static func note(_ line: String) {
        writeAll(Array(line.utf8), to: STDERR_FILENO)
    }

    /// Warns on standard error of each event of a command's streams that was passed over (it
    /// does not decode): the command decided by its rules on the rest.
    public static func warn(passedOver events: [PassedOverEvent]) {
        for event in events {
            note("\(toolName): warning: passed over \(TerminalText.safe(event.description)) — it does not decode\n")
        }
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = write(descriptor, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    /// Whether standard output is a terminal.
    static var outputIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
    /// Whether standard error is a terminal (progress is shown only then).
    static var errorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
}
