import ArgumentParser
import HTTPServer

/// What a program adds to `esctl serve`: options of its own (`--chat-room` in the shipped esctl)
/// and, made from them, its apps' parts on the server (their own routes and console views).
/// Give the type to ``Esctl/run(name:version:apps:subcommands:serveExtras:)``.
public protocol ServeExtras: ParsableArguments {
    /// The parts of every app built in; the server keeps those of the apps `--apps` chose.
    func serverParts() -> [any AppServerParts]
}

/// `esctl serve` as it is: no options beyond its own, no app parts beyond the apps' commands.
public struct NoServeExtras: ServeExtras {
    public init() {}
    public func serverParts() -> [any AppServerParts] { [] }
}
