import ArgumentParser
import EventStore
import Foundation

/// The options every command shares: where the store is and how durable its commits are.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store directory (default: $ESCTL_DB, else ./esctl.db).", valueName: "DIR"))
    var db: String?

    @Option(name: .long, help: "Commit durability: full, no-meta-sync or no-sync (see the README for what a crash can cost).")
    var durability: DurabilityOption = .full

    /// The store directory: `--db`, else `$ESCTL_DB`, else `./esctl.db`.
    var path: String {
        if let db { return db }
        if let fromEnvironment = ProcessInfo.processInfo.environment["ESCTL_DB"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return "./esctl.db"
    }

    /// Opens the store with the system clock and time-ordered ids (creating it when missing).
    func open() throws -> EventStore {
        try EventStore(path: path, configuration: Configuration(durability: durability.durability))
    }

    /// Opens a store that must exist already: for commands that only look at one (verify,
    /// backup, export), a mistyped path is an error (67), not a new empty store, and a
    /// directory without a store is left as it is.
    func openExisting() throws -> EventStore {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        // A file, or a directory this user cannot look into: opening says precisely why (69).
        if exists && (!isDirectory.boolValue || access(path, R_OK | X_OK) != 0) { return try open() }
        guard FileManager.default.fileExists(atPath: path + "/data.mdb") else {
            throw CLIError(.notFound, "There is no store at '\(path)'; check --db (or $ESCTL_DB).")
        }
        return try open()
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
