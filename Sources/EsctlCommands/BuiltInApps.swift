import AppModules
import ArgumentParser

/// The app modules this esctl carries, which `--apps` chooses among, and the subcommands they
/// bring: given once by ``Esctl/run(name:version:apps:subcommands:serveExtras:)`` before the command line is read.
enum BuiltInApps {
    // nonisolated(unsafe): written once by `Esctl.run` before anything reads them (parsing,
    // commands, the server all come after), and only read from then on.
    nonisolated(unsafe) private static var registeredModules: [any AppModule] = []
    nonisolated(unsafe) private static var registeredSubcommands: [any ParsableCommand.Type] = []
    nonisolated(unsafe) private static var registeredServe: any ParsableCommand.Type = Serve<NoServeExtras>.self
    nonisolated(unsafe) private static var registeredName = "esctl"
    nonisolated(unsafe) private static var registeredVersion: String? = nil

    /// Registers what ``Esctl/run(name:version:apps:subcommands:serveExtras:)`` was given.
    static func register(_ modules: [any AppModule], subcommands: [any ParsableCommand.Type], serve: any ParsableCommand.Type) {
        registeredModules = modules
        registeredSubcommands = subcommands
        registeredServe = serve
    }

    /// Registers the program's name and version text (``Esctl/run(name:version:apps:subcommands:serveExtras:)``).
    static func register(name: String, version: String?) {
        registeredName = name
        registeredVersion = version
    }

    /// The name the program calls itself: its root command's, and the prefix of what it writes
    /// on standard error.
    static var toolName: String { registeredName }

    /// What `--version` prints.
    static var versionText: String { registeredVersion ?? EsctlVersion.text }

    /// `serve`, with the options the program adds.
    static var serveCommand: any ParsableCommand.Type { registeredServe }

    /// Every module built in.
    static var modules: [any AppModule] { registeredModules }

    /// The subcommands the modules bring.
    static var subcommands: [any ParsableCommand.Type] { registeredSubcommands }

    /// All of them, for help texts and checks that do not depend on `--apps` (``Esctl/run(name:version:apps:subcommands:serveExtras:)``
    /// refused modules that cannot be registered together).
    static var set: AppSet { (try? AppSet(modules)) ?? .none }
}
