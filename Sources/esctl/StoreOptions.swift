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

    /// Opens the store with the system clock and time-ordered ids.
    func open() throws -> EventStore {
        try EventStore(path: path, configuration: Configuration(durability: durability.durability))
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
