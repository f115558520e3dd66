import EventStoreCore

/// The tags campground events carry, so that a command reads only the facts its rule spans
/// (``CampgroundBookingDecider``): every event `campground:KEY`; a camper's `camper:ID`; a
/// site's `site:NUMBER`; a reservation's (and its cancellation's) both.
public enum CampgroundTags {
    /// Every event of the campground `key`.
    public static func campground(_ key: String) -> String { "campground:\(key)" }
    /// The events of site `number`.
    public static func site(_ number: Int) -> String { "site:\(number)" }
    /// The events of camper `id`.
    public static func camper(_ id: String) -> String { "camper:\(id)" }

    /// The tags of `event` in campground `key`, given the state after it (a cancellation's site
    /// and camper are its reservation's).
    static func tags(for event: CampgroundEvent, campground key: String, state: Campground) -> [String] {
        let all = campground(key)
        switch event {
        case let .camperAdded(added): return [all, camper(added.camperId)]
        case let .siteAdded(added): return [all, site(added.number)]
        case let .siteDeleted(deleted): return [all, site(deleted.number)]
        case let .reservationRecorded(recorded): return [all, site(recorded.site), camper(recorded.camperId)]
        case let .reservationCancelled(cancelled):
            guard let reservation = state.reservation(cancelled.reservationId) else { return [all] }
            return [all, site(reservation.site), camper(reservation.camperId)]
        }
    }
}
