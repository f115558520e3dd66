import CoreMetrics
import ArgumentParser
import EventStore
import Foundation
import Logging
import AppModules
import Projections
#if PostgreSQL
import EventStorePostgres
#endif

/// The option every command shares: where the store is.
public struct StoreOptions: ParsableArguments {
    /// The options as ArgumentParser fills them.
    public init() {}

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: a directory, or a PostgreSQL URL postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]...]/DATABASE (?host=/socket/dir for a Unix socket, target_session_attrs=read-write|any|... among several servers). Default: $ESCTL_DB, else ./esctl.db.",
            valueName: "DIR|URL"))
    var db: String?

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp(
            "Log what the store, the projections and the commands tell (a slow commit, the map growing, a passed-over event) to standard error, from this level up: trace, debug, info, notice, warning, error or critical. Silent by default.",
            valueName: "LEVEL"))
    var logLevel: Logger.Level?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The apps whose read models, commands and routes this command registers: all, none, or names separated by commas, of \(BuiltInApps.set.described). Default: $ESCTL_APPS, else all. Events read in their newest shape whatever the choice.",
            valueName: "LIST"))
    var apps: String?

    /// The app modules `--apps` chooses (else `$ESCTL_APPS`, else all of those built in). Throws
    /// `AppSelectionError` (exit 64) for a name not built in.
    public func selectedApps() throws(AppSelectionError) -> AppSet {
        let selection = apps ?? ProcessInfo.processInfo.environment["ESCTL_APPS"] ?? "all"
        return try AppSet.select(selection, from: BuiltInApps.modules)
    }

    /// The projections a runner of this store registers: the chosen apps' and the log summaries.
    func projections() throws(AppSelectionError) -> [any Projection] {
        try selectedApps().projections + LogSummaries.all
    }

    /// The logger `--log-level` asks for: to standard error from that level up, else silent.
    public var logger: Logger {
        guard let logLevel else { return Logger(label: "esctl", factory: { _ in SwiftLogNoOpLogHandler() }) }
        var logger = Logger(label: "esctl") { label in StreamLogHandler.standardError(label: label) }
        logger.logLevel = logLevel
        return logger
    }

    /// Whether the store is a PostgreSQL database (`--db` is a postgres:// URL).
    var isPostgres: Bool { path.hasPrefix("postgres://") || path.hasPrefix("postgresql://") }

    /// The store directory or URL: `--db`, else `$ESCTL_DB`, else `./esctl.db`.
    public var path: String {
        if let db { return db }
        if let fromEnvironment = ProcessInfo.processInfo.environment["ESCTL_DB"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return "./esctl.db"
    }

    /// Opens the store with the system clock and time-ordered ids: by default creating it when
    /// missing (for the commands that write); `.existing` and `.readOnly` for the commands that
    /// read, where a path without a store is an error (67) and nothing is created. Events read
    /// in their newest shape (every built-in app's upcasters), or `asStored`, as recorded.
    func open(
        _ mode: OpenMode = .createIfMissing, durability: Durability = .full, metricsFactory: (any MetricsFactory)? = nil,
        asStored: Bool = false, subscriptionPageBytes: Int? = nil
    ) async throws -> any EventLog {
        // Every built-in app's upcasters, whatever --apps chooses: they change no event of
        // another app, and the projections and snapshots that read every type record the
        // upcasters they were built with, so a store opened with fewer would rebuild them at
        // each switch. The choice is still checked first: a name not built in opens nothing.
        _ = try selectedApps()
        let upcasters = BuiltInApps.set.upcasters
        var configuration = StoreConfiguration(
            durability: durability, logger: logger, metricsFactory: metricsFactory, upcasters: asStored ? [] : upcasters)
        if let subscriptionPageBytes { configuration.subscriptionPageBytes = subscriptionPageBytes }
        do {
            if isPostgres {
                #if PostgreSQL
                return try await PostgresEventStore(url: path, mode: mode, configuration: configuration)
                #else
                throw CLIError(.invalidInput, "This \(Console.toolName) was built without PostgreSQL (the trait PostgreSQL); give a store directory.")
                #endif
            }
            return try EventStore(path: path, mode: mode, configuration: configuration)
        } catch let error as EventStoreError where error.code == .notFound {
            if isPostgres {
                throw CLIError(.notFound, "\(error.message) Check --db (or $ESCTL_DB).")
            }
            throw CLIError(.notFound, "There is no store at '\(path)'; check --db (or $ESCTL_DB), or create one with `\(Console.toolName) init`.")
        }
    }

    /// Opens an existing store read-only (LMDB's read-only mode): for the commands that only
    /// read the log, which then work on a store this user may not write and never change it.
    func openReadOnly(asStored: Bool = false) async throws -> any EventLog {
        try await open(.readOnly, asStored: asStored)
    }


    /// Opens an existing LMDB store read-only, for the commands that work on its files
    /// (backup, the page check); a PostgreSQL URL is a usage error (64) naming `instead`.
    func openDirectory(for command: String, instead: String) throws -> EventStore {
        guard !isPostgres else {
            throw CLIError(.invalidInput, "\(command) works on a store directory, not on PostgreSQL; \(instead)")
        }
        do {
            return try EventStore(path: path, mode: .readOnly, configuration: StoreConfiguration(logger: logger))
        } catch let error as EventStoreError where error.code == .notFound {
            throw CLIError(.notFound, "There is no store at '\(path)'; check --db (or $ESCTL_DB), or create one with `\(Console.toolName) init`.")
        }
    }

    /// Opens an existing store for reading and writing: for the commands that read the log and
    /// keep projection state in the store (query, projections, rebuild).
    func openExisting() async throws -> any EventLog {
        try await open(.existing)
    }
}

/// The options of the commands that write: the store, and how durable their commits are.
public struct WritingStoreOptions: ParsableArguments {
    /// The options as ArgumentParser fills them.
    public init() {}

    /// Where the store is, and the apps chosen.
    @OptionGroup public var location: StoreOptions

    @Option(name: .long, help: "Commit durability: full, no-meta-sync or no-sync (docs/esctl.md: what a crash can cost).")
    var durability: DurabilityOption = .full

    /// The store directory or URL: `--db`, else `$ESCTL_DB`, else `./esctl.db`.
    public var path: String { location.path }

    /// Opens the store, creating it when missing; `asStored` without the apps' upcasters.
    public func open(asStored: Bool = false) async throws -> any EventLog {
        try await location.open(.createIfMissing, durability: durability.durability, asStored: asStored)
    }

    /// Opens an existing store for reading and writing (rebuild).
    func openExisting() async throws -> any EventLog {
        try await location.open(.existing, durability: durability.durability)
    }

    /// Opens an existing store and a runner of every registered projection (rebuild).
    func openRunner() async throws -> (any EventLog, ProjectionRunner) {
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
