import Projections

/// The apps' read models, registered by name: what esctl (and the server) know. A new app adds
/// its projections here.
public enum AppCatalog {
    /// The read models of the apps.
    public static let apps: [any Projection] = [
        AppStateProjection(), AlertsProjection(), MessagesProjection(), CampersProjection(), CampsitesProjection(),
        ReservationsProjection(),
    ]

    /// Summaries of any log: a count per type and a per-stream summary.
    public static let logSummaries: [any Projection] = [EventCountByType(), StreamSummary()]

    /// Every projection esctl registers.
    public static var all: [any Projection] { apps + logSummaries }
}
