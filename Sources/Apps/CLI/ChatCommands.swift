import ArgumentParser
import EsctlCommands
import Commands
import EventStore
import Projections
import Apps
import WireFormat

struct Chat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A chat room: say something, count down, share a location, connect, go away, come back.",
        discussion: "Each message is printed as it is recorded: DATE  USER: TEXT (system messages have no user). An empty text exits 64 and records nothing.",
        subcommands: [Say.self, Countdown.self, Location.self, Connect.self, Away.self, Back.self])

    struct Speaker: ParsableArguments {
        @Option(help: ArgumentHelp("Who speaks.", valueName: "U")) var user: String
    }

    static func line(_ event: RecordedEvent) -> String {
        let date = ISO8601.string(microseconds: event.recordedAtMicroseconds)
        guard let chat = try? ChatEvent(recorded: event) else { return "\(date)  \(event.type)" }
        let shown = chat.shown
        return "\(date)  " + (shown.user.map { "\($0): " } ?? "") + shown.text
    }

    static func record(_ command: ChatCommand, _ options: DomainOptions, _ speaker: Speaker, _ room: RoomOption) async throws {
        try await reportingErrors {
            try await options.withBackend(of: ChatApp()) { backend in
                let event = try await backend.chat(command, user: speaker.user, room: room.room)
                if !options.printJSON([event]) { Console.print(line(event)) }
            }
        }
    }

    struct Say: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say something.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var speaker: Speaker
        @OptionGroup var room: RoomOption
        @Argument(help: "The text.") var text: String
        func run() async throws { try await Chat.record(.say(text), options, speaker, room) }
    }

    struct Location: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Share a location: says \"📍 ADDRESS\".")
        @OptionGroup var options: DomainOptions
        @OptionGroup var speaker: Speaker
        @OptionGroup var room: RoomOption
        @Argument(help: "The address.") var address: String
        func run() async throws { try await Chat.record(.shareLocation(address), options, speaker, room) }
    }

    struct Connect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say that the user connected (\"NAME connected\").")
        @OptionGroup var options: DomainOptions
        @OptionGroup var speaker: Speaker
        @OptionGroup var room: RoomOption
        func run() async throws { try await Chat.record(.presence(.connected), options, speaker, room) }
    }

    struct Away: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say that the user went away (\"NAME went away\").")
        @OptionGroup var options: DomainOptions
        @OptionGroup var speaker: Speaker
        @OptionGroup var room: RoomOption
        func run() async throws { try await Chat.record(.presence(.wentAway), options, speaker, room) }
    }

    struct Back: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say that the user came back (\"NAME came back\").")
        @OptionGroup var options: DomainOptions
        @OptionGroup var speaker: Speaker
        @OptionGroup var room: RoomOption
        func run() async throws { try await Chat.record(.presence(.cameBack), options, speaker, room) }
    }

    struct Countdown: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Count down to a text: \"3...\", \"2...\", \"1...\", then \"🎉 TEXT\", one interval apart.",
            discussion: "Each message is printed as it is recorded. Ctrl-C stops the countdown (exit 130); what was said stays said.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var speaker: Speaker
        @OptionGroup var room: RoomOption
        @Argument(help: "The text to count down to.") var text: String
        @Option(
            parsing: .unconditional, help: ArgumentHelp("Seconds between messages.", valueName: "SECONDS"),
            transform: Numbers.decimal("--interval", 0...3600))
        var interval: Double = 1

        func run() async throws {
            try await reportingErrors {
                try await options.withBackend(of: ChatApp()) { backend in
                    let json = options.json
                    let (user, room, text, interval) = (speaker.user, room.room, text, interval)
                    let countdown = Task {
                        try await backend.countdown(to: text, user: user, room: room, interval: .milliseconds(Int64(interval * 1000))) { event in
                            json ? Console.printJSON(EventLines.json(event)) : Console.print(Chat.line(event))
                            Console.flush()
                        }
                    }
                    let interrupt = Interrupts.onSignals { countdown.cancel() }
                    defer { interrupt.cancel() }
                    let recorded = try await countdown.value
                    if recorded.count < ChatDecider.countdown(to: text).count {
                        throw ExitCode(Interrupts.exitStatus.rawValue)
                    }
                }
            }
        }
    }
}
