import AppModules
import ArgumentParser
@_spi(Records) import EventStoreCore
@_spi(Records) import EventStoreJSON
import EventStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// esctl: the command-line face of the event store, as a library. An executable of its own is
/// `await Esctl.run(name: "myctl", apps: [MyApp()], subcommands: [MyCommand.self])`: esctl's generic commands,
/// the app modules it carries (which `--apps` chooses among), the subcommands they bring, and
/// what they add to `serve` (``ServeExtras``).
public struct Esctl: AsyncParsableCommand {
    /// The root command, as ArgumentParser makes it.
    public init() {}

    /// Runs esctl on the process's arguments with `apps` built in, `subcommands` beside the
    /// generic ones and `serveExtras`' options on `serve` (its apps' routes and console views), and
    /// exits with its status (the table of ``ExitStatus``). `name` is what the program calls
    /// itself (in its help, and before each line it writes on standard error: `lendctl: ...`;
    /// letters, digits, `-` and `_`, starting with a letter, at most 40 bytes);
    /// `version` what `--version` prints (esctl's own by default). Call it once, from
    /// the executable's top level. Modules that cannot be registered together (two of one name,
    /// a name a route cannot carry, `all` or `none`) or a subcommand named as a generic one end
    /// the process with exit 70: they are the program's mistakes, not its user's.
    public static func run(
        name: String = "esctl", version: String? = nil,
        apps: [any AppModule], subcommands: [any ParsableCommand.Type] = [], serveExtras: any ServeExtras.Type = NoServeExtras.self
    ) async -> Never {
        guard AppSet.isPlainName(name, maxBytes: 40) else {
            Console.error("the name '\(name.prefix(40))' cannot name this program: use letters, digits, '-' and '_', starting with a letter, at most 40 bytes.")
            Terminal.exit(ExitStatus.internalError.rawValue)
        }
        BuiltInApps.register(name: name, version: version)
        do throws(AppSelectionError) {
            _ = try AppSet(apps)
        } catch {
            Console.error("the apps built into this program cannot be registered together: \(error.message)")
            Terminal.exit(ExitStatus.internalError.rawValue)
        }
        // Registered first: the commands' configurations (read below for their names) may list
        // what the apps bring, and are made once.
        BuiltInApps.register(apps, subcommands: subcommands, serve: serveCommand(serveExtras))
        let generic = Set(genericSubcommands.map { $0._commandName })
        for subcommand in subcommands where generic.contains(subcommand._commandName) {
            Console.error("the subcommand '\(subcommand._commandName)' of this program has the name of one of esctl's own; give it another.")
            Terminal.exit(ExitStatus.internalError.rawValue)
        }
        await main()
        // What a command printed without going through reportingErrors is written out too.
        Console.flush()
        Terminal.exit(ExitStatus.success.rawValue)
    }

    /// `serve` with `extras`' options.
    private static func serveCommand<Extras: ServeExtras>(_ extras: Extras.Type) -> any ParsableCommand.Type {
        Serve<Extras>.self
    }

    /// esctl's own commands.
    static var genericSubcommands: [any ParsableCommand.Type] {
        [
        Init.self, Append.self, Read.self, BuiltInApps.serveCommand, Replay.self, Subscribe.self, Stats.self, Import.self, Export.self,
        ProjectionsCommand.self, Rebuild.self, Query.self, SnapshotsCommand.self, TrackingCommand.self, Verify.self, Backup.self, CheckPages.self,
        StreamsCommand.self, Purge.self, Forget.self, GroupCommand.self, AppCommandRun.self,
        ]
    }

    /// esctl's generic commands, then the built-in apps' own.
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
        commandName: BuiltInApps.toolName,
        abstract: "Append, read, replay, query and serve an event store: an embedded LMDB directory or a PostgreSQL database.",
        discussion: """
            Every command takes --db DIR|URL: a store directory (LMDB) or a postgres:// URL \
            (default: $ESCTL_DB, else ./esctl.db), and --apps LIST: the apps the store is opened \
            with, all (the default, $ESCTL_APPS), none, or names separated by commas. Errors are \
            one sentence on standard error.

            Exit codes (the same for every command):
            \(ExitStatus.helpText)
            """,
        version: BuiltInApps.versionText,
        subcommands: genericSubcommands + BuiltInApps.subcommands
    )
    }

    /// Parses the command line; when that fails and it holds negative numbers, which
    /// ArgumentParser takes for options, parses it again with them read as values (see
    /// ``Numbers/rereadingNegativeNumbers(_:)``) so the command can say what the number must be.
    static func parseReadingNegativeNumbers() throws -> ParsableCommand {
        let arguments = CommandLine.movingSharedOptionsAfterTheCommand(Array(CommandLine.arguments.dropFirst()))
        if let unknown = unknownCommand(in: arguments) {
            Console.error(unknown)
            Terminal.exit(ExitStatus.invalidInput.rawValue)
        }
        do {
            return try parseAsRoot(arguments)
        } catch {
            guard let reread = Numbers.rereadingNegativeNumbers(arguments) else { throw error }
            // Read that way, a refusal names the number and its range (not "Missing value").
            return try parseAsRoot(reread)
        }
    }

    /// The sentence for a command name that is not one (`esctl apend`, `esctl help nosuch`,
    /// `esctl camp reservee`), with the closest command when one is close; nil when every
    /// command word is known.
    static func unknownCommand(in arguments: [String]) -> String? {
        var command: any ParsableCommand.Type = Esctl.self
        var path: [String] = []
        var index = arguments.first == "help" ? 1 : 0
        while index < arguments.count {
            let word = arguments[index]
            let subcommands = command.configuration.subcommands
            if subcommands.isEmpty || word.hasPrefix("-") { return nil }
            guard let next = subcommands.first(where: { $0._commandName == word }) else {
                if path.isEmpty && word == "help" { return nil }
                let names = subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
                let prefix = path.isEmpty ? "" : path.joined(separator: " ") + " "
                if let closest = CommandNames.closest(to: word, among: names) {
                    return "Unknown command '\(prefix)\(word)'. Did you mean '\(prefix)\(closest)'?"
                }
                return "Unknown command '\(prefix)\(word)'. The commands are: \(names.joined(separator: ", "))."
            }
            path.append(word)
            command = next
            index += 1
        }
        return nil
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
    public static func main() async {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeRawBufferPointer(start: argument, count: strlen(argument))
            if !UTF8Check.isValid(bytes) {
                Console.error("Argument \(index) is not valid UTF-8; give text in UTF-8.")
                Terminal.exit(ExitStatus.invalidInput.rawValue)
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
            Console.error(sentence + " See `\(BuiltInApps.toolName) help` for the usage.")
            Terminal.exit(code.rawValue)
        }
    }
}

extension CommandLine {
    /// The options every command shares (`--db`, `--apps`, `--durability`, `--log-level`, `--json`) read where people
    /// put them too, before the command (`esctl --db store stats`): moved after the command's
    /// words (and before a `--`), where ArgumentParser looks for them.
    static func movingSharedOptionsAfterTheCommand(_ arguments: [String]) -> [String] {
        var moved: [String] = []
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("--") {
            let word = arguments[index]
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            switch name {
            case "--db", "--apps", "--durability", "--log-level":
                moved.append(word)
                if !word.contains("="), index + 1 < arguments.count {
                    moved.append(arguments[index + 1])
                    index += 1
                }
            case "--json":
                moved.append(word)
            default:
                return arguments
            }
            index += 1
        }
        guard !moved.isEmpty else { return arguments }
        var rest = Array(arguments[index...])
        let end = rest.firstIndex(of: "--") ?? rest.count
        rest.insert(contentsOf: moved, at: end)
        return rest
    }
}

/// Suggestions for a mistyped command.
enum CommandNames {
    /// The name closest to `word` (at most two edits away, or one it starts), if any.
    static func closest(to word: String, among names: [String]) -> String? {
        let scored = names.map { ($0, distance(word, $0)) }.filter { $0.1 <= 2 || $0.0.hasPrefix(word) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// The Levenshtein distance between two words.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// Ends the process now with `status` (`exit` alone would name `ParsableCommand.exit` inside
/// commands).
enum Terminal {
    static func exit(_ status: Int32) -> Never {
        #if canImport(Glibc)
        Glibc.exit(status)
        #else
        Darwin.exit(status)
        #endif
    }
}
