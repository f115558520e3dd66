import AppModules
import Commands
import EventStoreCore
import Projections

/// The chat room: messages, presence and countdowns per room, the timeline's read model, and
/// the commands (`/apps/chat/...`). The chat's own protocol (`/chat/room`, `/chat/say`) is the
/// server's.
public struct ChatApp: AppModule {
    public let name = "chat"
    public let summary = "A chat room: messages, presence, countdowns."
    public var projections: [any Projection] { [MessagesProjection()] }

    /// The longest pause between the messages of a countdown run as a command, in seconds
    /// (`esctl chat countdown` allows an hour; a request held for three hours helps no client).
    public static let maximumCountdownInterval = 10.0

    public var openAPI: String? { String(decoding: PackageResources.chat_yaml, as: UTF8.self) }

    public init() {}

    public func commands(_ context: AppContext) throws -> [AppCommand] {
        let backend = try AppBackend(context, reaching: schemaVersions)
        let speaker = [AppField("user", .string, "Who speaks."), AppField("room", .string, required: false, "The room (default \"default\").")]
        func chat(_ name: String, _ summary: String, _ fields: [AppField], _ command: @escaping @Sendable (AppInput) throws -> ChatCommand) -> AppCommand {
            AppCommand(name, summary: summary, fields: speaker + fields) { input in
                let user = try input.string("user")
                let command = try command(input)
                return .events([try await backend.chat(command, user: user, room: try input.string("room", default: AppStreams.defaultKey))])
            }
        }
        return [
            chat("say", "Says something.", [AppField("text", .string, "The message.")]) { input in .say(try input.string("text")) },
            chat("location", "Shares a location.", [AppField("address", .string, "The address.")]) { input in
                .shareLocation(try input.string("address"))
            },
            chat("connect", "Joins the room.", []) { _ in .presence(.connected) },
            chat("away", "Goes away.", []) { _ in .presence(.wentAway) },
            chat("back", "Comes back.", []) { _ in .presence(.cameBack) },
            AppCommand(
                "countdown", summary: "Counts down to a text: 3..., 2..., 1..., then the text, interval seconds apart.",
                fields: speaker + [
                    AppField("text", .string, "What the countdown ends with."),
                    AppField("interval", .number, required: false, "Seconds between messages, 0 to 10 (default 1)."),
                ]
            ) { input in
                let user = try input.string("user")
                let room = try input.string("room", default: AppStreams.defaultKey)
                let text = try input.string("text")
                let interval = try input.double("interval", default: 1)
                guard interval >= 0, interval <= Self.maximumCountdownInterval else {
                    throw input.invalid(
                        "interval", "The interval must be from 0 to \(Int(Self.maximumCountdownInterval)) seconds (esctl chat countdown allows longer).")
                }
                let recorded = try await backend.countdown(to: text, user: user, room: room, interval: .milliseconds(Int64((interval * 1000).rounded())))
                return .events(recorded)
            },
        ]
    }
}
