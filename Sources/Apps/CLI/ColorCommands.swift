import Apps
import ArgumentParser
import EsctlCommands
import EventStore
import Projections

struct Color: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The color calculator: press a key of its hex keypad, or set its display.",
        discussion: """
            Each command records the key press or the setting and prints the calculator's display \
            after it: HEX-TEXT  R, G, B, O  NAME (one line), or with --json the object \
            {"calculator","hexText","rgboText","name","color":{"red","green","blue","opacity"},"derived"} \
            that `esctl query color --json` prints. An unknown key, a ninth digit or a setting that \
            is not up to 8 hex digits exits 64 and records nothing.
            """,
        subcommands: [Press.self, Set.self])

    struct Options: ParsableArguments {
        @OptionGroup var store: WritingStoreOptions

        @Option(help: ArgumentHelp("The calculator.", valueName: "K"))
        var calculator: String = AppStreams.defaultKey

        @Flag(help: "Print the calculator's state as JSON.")
        var json = false
    }

    static func run(_ command: ColorCommand, _ options: Options) async throws {
        try await reportingErrors {
            try await options.store.withBackend(of: ColorApp()) { backend in
                let outcome = try await backend.color(command, calculator: options.calculator)
                Console.warn(passedOver: outcome.passedOver)
                let display = outcome.state
                if options.json {
                    Console.printJSON(display.json(calculator: options.calculator).serialized)
                } else {
                    Console.print("\(display.hexText)  \(display.rgboText)  \(display.name)")
                }
            }
        }
    }

    struct Press: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Press a key: 0-9, A-F (either case), backspace or clear.")
        @OptionGroup var options: Options
        @Argument(help: "The key.") var key: String
        func run() async throws { try await Color.run(.press(key), options) }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the display: up to 8 hex digits, with or without '#'.")
        @OptionGroup var options: Options
        @Argument(help: ArgumentHelp("The hex text.", valueName: "HEX")) var hex: String
        func run() async throws { try await Color.run(.set(hex), options) }
    }
}
