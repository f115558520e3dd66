import ArgumentParser

/// The seed apps' own esctl subcommands (`esctl fitness`, `alerts`, `chat`, `camp`, `color`),
/// for an executable that carries the seed apps: `Esctl.run(apps: AppCatalog.modules,
/// subcommands: SeedAppCommands.all)`.
public enum SeedAppCommands {
    /// Every one, in the order `esctl help` lists them.
    public static let all: [any ParsableCommand.Type] = [Fitness.self, Alerts.self, Chat.self, Camp.self, Color.self]
}
