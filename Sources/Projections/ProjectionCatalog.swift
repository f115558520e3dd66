/// The projections esctl knows by name.
public enum ProjectionCatalog {
    /// The read models of the three apps.
    public static let domain: [any Projection] = [
        AppStateProjection(), AlertsProjection(), MessagesProjection(), CampersProjection(), CampsitesProjection(),
        ReservationsProjection(),
    ]

    /// The example projections: a count per type and a per-stream summary.
    public static let examples: [any Projection] = [EventCountByType(), StreamSummary()]

    /// Every projection esctl registers.
    public static var all: [any Projection] { domain + examples }
}
