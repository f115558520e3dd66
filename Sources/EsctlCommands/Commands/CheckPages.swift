import ArgumentParser
import EventStore
import Foundation

/// `esctl check-pages`: reads every page of a store through LMDB, in a process of its own (the
/// one `verify` and `backup` start), so that LMDB crashing on a damaged page is a report.
struct CheckPages: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-pages",
        abstract: "Read every page of the store through LMDB (what verify and backup run in a child process).",
        shouldDisplay: false)

    @OptionGroup var store: StoreOptions

    func run() async throws {
        try await reportingErrors {
            do {
                let store = try self.store.openDirectory(for: "check-pages", instead: "PostgreSQL checks its own pages.")
                _ = try await store.closingAfter {
                    try store.readEveryEntry { name in
                        Console.print("reading \(name)")
                        Console.flush()
                    }
                }
            } catch let error as EventStoreError where error.code == .damaged {
                // Damage LMDB or the store reports, told apart from a store that is not there.
                Console.print("damaged: \(error.message)")
                throw error
            }
        }
    }
}

/// Runs `esctl check-pages` on a store in a child process and turns its end into a report.
enum PageCheck {
    /// How the child's reading of every page ended.
    enum Outcome: Sendable {
        /// Every page read.
        case clean
        /// The store did not open (no store, a file, no permission): the child's own error.
        case unopened(CLIError)
        /// LMDB stopped (a crash) or reported damage while reading: one sentence naming where.
        case damaged(String)
    }

    /// Reads every page of the store at `path` in a child process, awaited on a thread of its own.
    static func run(path: String) async throws -> Outcome {
        try await onOwnThread(named: "esctl.check-pages") { try runBlocking(path: path) }
    }

    private static func runBlocking(path: String) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["check-pages", "--db", absolute(path)]
        // The root as the child's directory: Foundation checks the directory it starts a child
        // in, and the user's own may be one this user cannot search (the path is absolute now).
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        // A crash on a damaged page is the answer here, not a bug to report: without Swift's
        // backtracer, which would symbolize the crash for a second or more before the child ends.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = printed.split(separator: "\n")
        let table = lines.last { $0.hasPrefix("reading ") }.map { String($0.dropFirst("reading ".count)) }
        let damage = lines.last { $0.hasPrefix("damaged: ") }.map { String($0.dropFirst("damaged: ".count)) }
        let sentence = complaint.split(separator: "\n").first.map { String($0.dropFirst("\(Console.toolName): ".count)) }
        switch process.terminationReason {
        case .uncaughtSignal:
            let signal = process.terminationStatus
            return .damaged(
                "The data file in '\(path)' is damaged: LMDB stopped with \(signalName(signal)) while reading \(table.map { "the table '\($0)'" } ?? "the tables it opens with"); restore the store from a backup.")
        case .exit where process.terminationStatus == 0:
            return .clean
        default:
            if let damage { return .damaged(damage) }
            let status = ExitStatus(rawValue: process.terminationStatus) ?? .storeUnavailable
            let message = sentence ?? "Reading the pages of '\(path)' failed (exit \(process.terminationStatus))."
            // A store that is not there, or cannot be opened: that error is the caller's answer.
            return .unopened(CLIError(status, message))
        }
    }

    /// The path made absolute against the working directory (read with getcwd, which needs no
    /// permission on the directories above it).
    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }

    private static var executable: URL {
        #if os(Linux)
        // The link itself, not where it points: exec through it needs no search permission on
        // the directories above the binary (a user who was handed an open esctl may not have it).
        return URL(fileURLWithPath: "/proc/self/exe")
        #else
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        #endif
    }

    private static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: return "SIGSEGV (a read outside its pages)"
        case SIGBUS: return "SIGBUS (a page beyond the end of the file)"
        case SIGABRT: return "SIGABRT (an assertion of its own failed)"
        default: return "signal \(signal)"
        }
    }
}
