import AppModules
import Commands
import EventStoreCore
import Projections

/// The seed apps as app modules (``AppModule``), and what they register together: what the
/// shipped esctl and server carry.
public enum AppCatalog {
    /// The four apps: the step counter with its alerts, the chat, the campground, the color
    /// calculator.
    public static let modules: [any AppModule] = [FitnessApp(), ChatApp(), CampgroundApp(), ColorApp()]

    /// The read models of the apps.
    public static var apps: [any Projection] { modules.flatMap(\.projections) }

    /// Summaries of any log: a count per type and a per-stream summary (``LogSummaries``).
    public static var logSummaries: [any Projection] { LogSummaries.all }

    /// Every projection the shipped esctl registers.
    public static var all: [any Projection] { apps + logSummaries }

    /// The apps' upcasters (``StoreConfiguration/upcasters``): a store the apps use is opened with
    /// them, so events recorded in an older shape read in the newest.
    public static var upcasters: [Upcaster] { modules.flatMap(\.upcasters) }

    /// The schema version of every app event type that evolved past 1, as the apps write and
    /// read it: a store the apps use must bring older events to it (``AppBackend`` checks).
    public static var schemaVersions: [String: UInt16] { ((try? AppSet(modules)) ?? .none).schemaVersions }
}

extension AppCatalog {
    /// Checks a stored snapshot with the app decider it belongs to (``AppSet/checkSnapshot(_:in:)``
    /// over every seed app); the problem in one sentence, or nil. Throws the store's errors.
    public static func check(_ snapshot: Snapshots.Entry, in store: any EventLog) async throws -> String? {
        try await AppSet(modules).checkSnapshot(snapshot, in: store)
    }
}
