import AppModules
import Commands
import EventStoreCore
import Projections

/// The color calculator's hex keypad: key presses per calculator, the display's read model, and
/// the commands (`/apps/color/...`), each answering the display after it.
public struct ColorApp: AppModule {
    public let name = "color"
    public let summary = "A color calculator's hex keypad."
    public var projections: [any Projection] { [ColorProjection()] }
    public let snapshotDeciders: Set<String> = ["color"]

    public var openAPI: String? { String(decoding: PackageResources.color_yaml, as: UTF8.self) }

    public init() {}

    public func checkSnapshot(_ snapshot: Snapshots.Entry, in store: any EventLog) async throws -> String? {
        guard let stream = snapshot.versions.first?.stream, let calculator = AppStreams.key(of: stream, prefix: AppStreams.colorPrefix) else {
            return AppSet.belongsToNoDecider(snapshot)
        }
        return try await Snapshots.check(snapshot, with: ColorDecider(calculator: calculator), in: store)
    }

    public func commands(_ context: AppContext) throws -> [AppCommand] {
        let backend = try AppBackend(context, reaching: schemaVersions)
        let calculatorField = AppField("calculator", .string, required: false, "The calculator (default \"default\").")
        func color(_ name: String, _ summary: String, _ field: AppField, _ command: @escaping @Sendable (AppInput) throws -> ColorCommand) -> AppCommand {
            AppCommand(name, summary: summary, fields: [calculatorField, field]) { input in
                let command = try command(input)
                let calculator = try input.string("calculator", default: AppStreams.defaultKey)
                let outcome = try await backend.color(command, calculator: calculator)
                return .state(outcome.state.json(calculator: calculator), recorded: !outcome.recorded.isEmpty, passedOver: outcome.passedOver)
            }
        }
        return [
            color("press", "Presses a key of the hex keypad.", AppField("key", .string, "The key: 0-9, A-F, backspace or clear.")) { input in
                .press(try input.string("key"))
            },
            color("set", "Sets the display to a hex color.", AppField("hex", .string, "Up to 8 hex digits, with or without #.")) { input in
                .set(try input.string("hex"))
            },
        ]
    }
}
