import ArgumentParser
import EventStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// esctl: the command-line face of the event store.
@main
struct Esctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "esctl",
        abstract: "Append, read, replay and inspect an embedded LMDB event store.",
        discussion: """
            Every command takes --db DIR (default: $ESCTL_DB, else ./esctl.db). Errors are one \
            sentence on standard error.

            Exit codes (the same for every command):
            \(ExitStatus.helpText)
            """,
        subcommands: [
            Init.self, Append.self, Read.self, Replay.self, Subscribe.self, Stats.self, Import.self, Export.self,
            ProjectionsCommand.self, Rebuild.self, Query.self, Verify.self, Backup.self,
            Fitness.self, Alerts.self, Chat.self, Camp.self,
        ]
    )

    /// Parses the command line; when that fails and it holds negative numbers, which
    /// ArgumentParser takes for options, parses it again with them read as values (see
    /// ``Numbers/rereadingNegativeNumbers(_:)``) so the command can say what the number must be.
    static func parseReadingNegativeNumbers() throws -> ParsableCommand {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            return try parseAsRoot(arguments)
        } catch {
            guard let reread = Numbers.rereadingNegativeNumbers(arguments) else { throw error }
            // Read that way, a refusal names the number and its range (not "Missing value").
            return try parseAsRoot(reread)
        }
    }

    /// ArgumentParser's message as one sentence: "The value 'X' is invalid for '--n <N>': REASON"
    /// says REASON only, which names the option and its range already.
    static func sentence(_ message: String) -> String {
        let line = message.replacingOccurrences(of: "\n", with: " ")
        if let match = line.firstMatch(of: /^The value '.*' is invalid for '[^']*': (.+)$/) { return String(match.1) }
        return line
    }

    /// Checks the raw arguments before parsing: Swift turns bytes that are not UTF-8 into
    /// replacement characters, which would slip into stream names unnoticed.
    static func main() async {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeRawBufferPointer(start: argument, count: strlen(argument))
            if !UTF8Check.isValid(bytes) {
                Console.error("Argument \(index) is not valid UTF-8; give text in UTF-8.")
                Glibc.exit(ExitStatus.invalidInput.rawValue)
            }
        }
        do {
            var command = try parseReadingNegativeNumbers()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // Help and the exits esctl chose itself go through as they are; usage errors become
            // one sentence on standard error, like every other error.
            let code = exitCode(for: error)
            if code == .success || error is ExitCode {
                exit(withError: error)
            }
            var sentence = Self.sentence(message(for: error))
            if let last = sentence.last, !".!?".contains(last) { sentence += "." }
            Console.error(sentence + " See `esctl help` for the usage.")
            Glibc.exit(code.rawValue)
        }
    }
}
