import ArgumentParser

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
            Append.self, Read.self, Replay.self, Subscribe.self, Stats.self, Import.self, Export.self,
            ProjectionsCommand.self, Rebuild.self, Query.self,
            Fitness.self, Alerts.self, Chat.self, Camp.self,
        ]
    )
}
