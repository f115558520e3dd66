import ArgumentParser
import EventStore
import Foundation
import Logging
import Projections

/// The option every command shares: where the store is.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store directory (default: $ESCTL_DB, else ./esctl.db).", valueName: "DIR"))
    var db: String?

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp(
            "Log what the store, the projections and the commands tell (a slow commit, the map growing, a passed-over event) to standard error, from this level up: trace, debug, info, notice, warning, error or critical. Silent by default.",
            valueName: "LEVEL"))
    var logLevel: Logger.Level?

    /// The logger `--log-level` asks for: to standard error from that level up, else silent.
    var logger: Logger {
        guard let logLevel else { return Logger(label: "esctl", factory: { _ in SwiftLogNoOpLogHandler() }) }
        var logger = Logger(label: "esctl") { label in StreamLogHandler.standardError(label: label) }
        logger.logLevel = logLevel
        return logger
    }

    /// The store directory: `--db`, else `$ESCTL_DB`, else `./esctl.db`.
    var path: String {
        if let db { return db }
        if let fromEnvironment = ProcessInfo.processInfo.environment["ESCTL_DB"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return "./esctl.db"
    }

    /// Opens the store with the system clock and time-ordered ids: by default creating it when
    /// missing (for the commands that write); `.existing` and `.readOnly` for the commands that
    /// read, where a path without a store is an error (67) and nothing is created.
    func open(_ mode: OpenMode = .createIfMissing, durability: Durability = .full) throws -> EventStore {
        do {
            return try EventStore(path: path, mode: mode, configuration: Configuration(durability: durability, logger: logger))
        } catch let error as EventStoreError where error.code == .notFound {
            throw CLIError(.notFound, "There is no store at '\(path)'; check --db (or $ESCTL_DB), or create one with `esctl init`.")
        }
    }

    /// Opens an existing store read-only (LMDB's read-only mode): for the commands that only
    /// read the log, which then work on a store this user may not write and never change it.
    func openReadOnly() throws -> EventStore {
        try open(.readOnly)
    }

    /// Opens an existing store for reading and writing: for the commands that read the log and
    /// keep projection state in the store (query, projections, rebuild).
    func openExisting() throws -> EventStore {
        try open(.existing)
    }
}

/// The options of the commands that write: the store, and how durable their commits are.
struct WritingStoreOptions: ParsableArguments {
    @OptionGroup var location: StoreOptions

    @Option(name: .long, help: "Commit durability: full, no-meta-sync or no-sync (see the README for what a crash can cost).")
    var durability: DurabilityOption = .full

    /// The store directory: `--db`, else `$ESCTL_DB`, else `./esctl.db`.
    var path: String { location.path }

    /// Opens the store, creating it when missing.
    func open() throws -> EventStore {
        try location.open(.createIfMissing, durability: durability.durability)
    }

    /// Opens an existing store for reading and writing (rebuild).
    func openExisting() throws -> EventStore {
        try location.open(.existing, durability: durability.durability)
    }

    /// Opens an existing store and a runner of every registered projection (rebuild).
    func openRunner() async throws -> (EventStore, ProjectionRunner) {
        try await location.openRunner(durability: durability.durability)
    }
}

enum DurabilityOption: String, ExpressibleByArgument, CaseIterable {
    case full
    case noMetaSync = "no-meta-sync"
    case noSync = "no-sync"

    var durability: Durability {
        switch self {
        case .full: return .full
        case .noMetaSync: return .noMetaSync
        case .noSync: return .noSync
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
