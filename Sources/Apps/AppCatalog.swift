import Commands
import EventStoreCore
import Projections

/// The apps' read models, registered by name: what esctl (and the server) know. A new app adds
/// its projections here.
public enum AppCatalog {
    /// The read models of the apps.
    public static let apps: [any Projection] = [
        AppStateProjection(), AlertsProjection(), MessagesProjection(), CampersProjection(), CampsitesProjection(),
        ReservationsProjection(), ColorProjection(),
    ]

    /// Summaries of any log: a count per type and a per-stream summary.
    public static let logSummaries: [any Projection] = [EventCountByType(), StreamSummary()]

    /// Every projection esctl registers.
    public static var all: [any Projection] { apps + logSummaries }

    /// The apps' upcasters (``StoreConfiguration/upcasters``): a store the apps use is opened with
    /// them, so events recorded in an older shape read in the newest.
    public static let upcasters: [Upcaster] = CampgroundUpcasters.all

    /// The schema version of every app event type that evolved past 1, as the apps write and
    /// read it: a store the apps use must bring older events to it (``AppBackend`` checks).
    public static let schemaVersions: [String: UInt16] = [CamperAdded.eventType: CamperAdded.schemaVersion]
}

extension AppCatalog {
    /// Checks a stored snapshot with the app decider it belongs to (found by its name and made
    /// from its streams); the problem in one sentence, or nil. A snapshot of no app decider is a
    /// problem too. Throws the store's errors.
    public static func check(_ snapshot: Snapshots.Entry, in store: any EventLog) async throws -> String? {
        let streams = snapshot.versions.map(\.stream)
        func key(_ prefix: String, at index: Int) -> String? {
            index < streams.count ? AppStreams.key(of: streams[index], prefix: prefix) : nil
        }
        switch snapshot.decider {
        case "fitness":
            if let user = key(AppStreams.fitnessPrefix, at: 0) { return try await Snapshots.check(snapshot, with: FitnessDecider(user: user), in: store) }
        case "alerts":
            if let user = key(AppStreams.alertsPrefix, at: 0) { return try await Snapshots.check(snapshot, with: AlertDecider(user: user), in: store) }
        case "color":
            if let calculator = key(AppStreams.colorPrefix, at: 0) {
                return try await Snapshots.check(snapshot, with: ColorDecider(calculator: calculator), in: store)
            }
        case "campground":
            if let name = key(AppStreams.campgroundPrefix, at: 0) {
                return try await Snapshots.check(snapshot, with: CampgroundDecider(campground: name), in: store)
            }
        default:
            break
        }
        return "a snapshot named '\(snapshot.decider)' for \(streams) belongs to no app's decider"
    }
}
