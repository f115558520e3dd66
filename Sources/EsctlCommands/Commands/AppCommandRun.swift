import AppModules
import ArgumentParser
import EventStore
import Foundation
import WireFormat

/// `esctl app APP COMMAND [INPUT]`: runs a command of a built-in app module from the shell, as
/// `POST /apps/APP/COMMAND` does over HTTP.
struct AppCommandRun: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Run a command of an app module, as POST /apps/APP/COMMAND does.",
        discussion: """
            The input is a JSON object of the command's declared fields, checked before the command \
            runs (exit 64 naming the field at fault). Prints what the command answers: each event \
            recorded as one JSON line (as replay --json), or the app's state as one JSON object; \
            nothing when nothing needed recording. A refusal of the app's rules exits by its kind \
            (1 rejected, 67 not found, ...), after the events it recorded anyway. An app or command \
            that is not among the apps chosen exits 67 with the list; input over 4 MiB exits 64. \
            Without APP, or without COMMAND, lists the commands of the apps chosen (--apps) and \
            their fields, on an existing store.
            """)

    /// The most input a command takes, as the server's default --max-body.
    static let maximumInputBytes = 4 << 20

    @OptionGroup var store: WritingStoreOptions

    @Argument(help: "The app: the {app} of the command's route.")
    var app: String?

    @Argument(help: "The command.")
    var command: String?

    @Argument(help: ArgumentHelp("The input: a JSON object, @FILE, or - to read standard input (default {}).", valueName: "JSON|@FILE|-"))
    var input: String?

    func run() async throws {
        try await reportingErrors {
            let apps = try self.store.location.selectedApps()
            // The input first: a mistake in it opens (and creates) nothing.
            let bytes = try input.map { try InputText.bytes($0, what: "the input", limit: Self.maximumInputBytes) } ?? Data()
            if let app, let command {
                _ = try AppInput.pairs(json: [UInt8](bytes), source: "the input of \(Console.toolName) app \(app) \(command)")
            }
            let log = try await (command == nil ? self.store.openExisting() : self.store.open())
            return try await log.closingAfter {
                let commands = try apps.commands(AppContext(store: log))
                if let app, !commands.contains(where: { $0.app == app }) {
                    let names = Array(Set(commands.map(\.app))).sorted()
                    throw CLIError(
                        .notFound,
                        "There is no app '\(TerminalText.safe(app))' with commands among the apps chosen (\(apps.described)); \(names.isEmpty ? "they have none" : "the apps with commands are: " + names.joined(separator: ", "))."
                    )
                }
                guard let app, let command else {
                    list(commands.filter { app == nil || $0.app == app })
                    return
                }
                guard let routed = commands.first(where: { $0.app == app && $0.command.name == command }) else {
                    let known = commands.map { "\($0.app) \($0.command.name)" }
                    throw CLIError(
                        .notFound,
                        "There is no command '\(TerminalText.safe(app)) \(TerminalText.safe(command))' among the apps chosen (\(apps.described)); \(known.isEmpty ? "they have none" : "the commands are: " + known.joined(separator: ", "))."
                    )
                }
                let given = try AppInput(json: [UInt8](bytes), source: "the input of \(Console.toolName) app \(app) \(command)", fields: routed.command.fields)
                do {
                    let answer = try await routed.command.run(given)
                    Console.warn(passedOver: answer.passedOver)
                    switch answer.body {
                    case let .events(events):
                        events.forEach { Console.printJSON(EventLines.json($0)) }
                    case let .state(value, _):
                        Console.printJSON(value.serialized)
                    }
                } catch let refusal as any AppRefusal {
                    refusal.recordedEvents.forEach { Console.printJSON(EventLines.json($0)) }
                    throw refusal
                }
            }
        }
    }

    /// Each command as `APP COMMAND {field: type, field?: type}  summary`.
    private func list(_ commands: [RoutedCommand]) {
        for routed in commands {
            let fields = routed.command.fields.map { "\($0.name)\($0.required ? "" : "?"): \($0.kind.rawValue)" }.joined(separator: ", ")
            let summary = routed.command.summary.isEmpty ? "" : "  \(routed.command.summary)"
            Console.print("\(routed.app) \(routed.command.name) {\(fields)}\(summary)")
        }
    }
}
