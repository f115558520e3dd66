import Commands
import EventStoreCore

/// The campground's booking rules as a dynamic consistency boundary: adding a site reads only the
/// campground's site events, and reserving reads only its site's events, its camper's, and the
/// last reservation recorded (for the next id), instead of the whole campground; each appends on
/// the condition that none of those changed since. The rules and answers are
/// ``CampgroundDecider``'s, decided on that part of the campground. Other commands are decided on
/// the whole campground (their query is every event of it).
public struct CampgroundBookingDecider: QueryDecider {
    public let campground: String
    private let rules: CampgroundDecider

    public init(campground: String = AppStreams.defaultKey) {
        self.campground = campground
        self.rules = CampgroundDecider(campground: campground)
    }

    public var initialState: Campground { Campground() }
    public func evolve(_ state: inout Campground, with event: CampgroundEvent) { state.apply(event) }
    public func decide(_ command: CampgroundCommand, state: Campground) throws -> [CampgroundEvent] {
        try rules.decide(command, state: state)
    }
    public func stream(for event: CampgroundEvent) -> String { rules.stream(for: event) }
    public func tags(for event: CampgroundEvent, in state: Campground) -> [String] {
        CampgroundTags.tags(for: event, campground: campground, state: state)
    }

    public func query(for command: CampgroundCommand) -> EventQuery {
        let all = CampgroundTags.campground(campground)
        switch command {
        case .addSite:
            return EventQuery(types: [SiteAdded.eventType, SiteDeleted.eventType], tags: [all])
        case let .reserve(site, camperId, _, _):
            return EventQuery([
                QueryItem(
                    types: [SiteAdded.eventType, SiteDeleted.eventType, ReservationRecorded.eventType, ReservationCancelled.eventType],
                    tags: [CampgroundTags.site(site), all]),
                QueryItem(types: [CamperAdded.eventType], tags: [CampgroundTags.camper(camperId), all]),
            ])
        case .addCamper, .deleteSite, .cancel:
            return EventQuery(tags: [all])
        }
    }

    public func latestQuery(for command: CampgroundCommand) -> EventQuery? {
        guard case .reserve = command else { return nil }
        return EventQuery(types: [ReservationRecorded.eventType], tags: [CampgroundTags.campground(campground)])
    }
}
