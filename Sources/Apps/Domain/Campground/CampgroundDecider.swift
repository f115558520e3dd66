import Commands
import EventStoreCore

/// What the campground's desk can do.
public enum CampgroundCommand: Sendable, Equatable {
    case addCamper(fullName: String, phoneNumber: String)
    case addSite(number: Int, electricity: Bool, water: Bool)
    case deleteSite(Int)
    case reserve(site: Int, camperId: String, date: CivilDate, nights: Int)
    case cancel(reservationId: String)
}

/// The campground's rules, for one campground. Refusals (nothing recorded): an empty or overlong
/// name, a site number out of range or taken, an unknown site, camper or reservation, a site with
/// reservations, a reservation that is not reserved, a stay outside the years 1 to 9999. A
/// reservation of 0 nights or fewer, or overlapping a reserved stay of the same site, is recorded
/// with status "Invalid" and its problem.
public struct CampgroundDecider: SnapshotDecider {
    /// The error domain of the reservation problems, as the original app named it.
    public static let errorDomain = "CampingManager"
    /// The problem and error code of a reservation of 0 nights or fewer.
    public static let invalidNights = (problem: "Invalid number of days", code: 5)
    /// The problem and error code of a reservation overlapping another of the same site (beyond the original).
    public static let siteTaken = (problem: "Site already reserved for those dates", code: 6)

    public let campground: String
    public let snapshotName = "campground"
    /// 2: the state keeps the last reservation number (``Campground/lastReservationNumber``).
    public let snapshotVersion = 2

    public init(campground: String = AppStreams.defaultKey) {
        self.campground = campground
    }

    public var streams: [String] { [AppStreams.campground(campground)] }
    public func stream(for event: CampgroundEvent) -> String { AppStreams.campground(campground) }
    public var initialState: Campground { Campground() }
    public func evolve(_ state: inout Campground, with event: CampgroundEvent) { state.apply(event) }
    public func tags(for event: CampgroundEvent, in state: Campground) -> [String] {
        CampgroundTags.tags(for: event, campground: campground, state: state)
    }

    public func decide(_ command: CampgroundCommand, state campground: Campground) throws -> [CampgroundEvent] {
        try Validate.key(self.campground, "campground")
        switch command {
        case let .addCamper(fullName, phoneNumber):
            try Validate.text(fullName, "camper's full name", limit: AppLimits.maximumNameCharacters)
            try Validate.text(phoneNumber, "camper's phone number", limit: AppLimits.maximumNameCharacters)
            return [.camperAdded(CamperAdded(camperId: campground.nextCamperId, fullName: fullName, phoneNumber: phoneNumber))]
        case let .addSite(number, electricity, water):
            guard number >= 1, number <= AppLimits.maximumSiteNumber else {
                throw AppError(
                    .invalidInput,
                    "The site number \(number) is \(number < 1 ? "not a positive number" : "too large"); give a number from 1 to \(AppLimits.maximumSiteNumber).")
            }
            guard campground.sites[number] == nil else {
                throw AppError(.duplicate, "Site \(number) already exists; the next free number is \(campground.nextSiteNumber).")
            }
            return [.siteAdded(SiteAdded(number: number, electricity: electricity, water: water))]
        case let .deleteSite(number):
            guard campground.sites[number] != nil else { throw Self.unknownSite(number) }
            let active = campground.reservations.filter { $0.site == number && $0.status == .reserved }
            guard active.isEmpty else {
                throw AppError(
                    .invalidState, "Site \(number) has active reservations (\(active.map(\.id).joined(separator: ", "))); cancel them first.")
            }
            return [.siteDeleted(SiteDeleted(number: number))]
        case let .reserve(site, camperId, date, nights):
            guard nights >= -AppLimits.maximumNights, nights <= AppLimits.maximumNights else {
                throw AppError(.invalidInput, "A stay of \(nights) nights is out of range; give at most \(AppLimits.maximumNights).")
            }
            let end = date.adding(days: nights)
            guard CivilDate.range.contains(date), CivilDate.range.contains(end) else {
                throw AppError(
                    .invalidInput,
                    "A stay from \(date) for \(nights) nights ends on \(end), outside the years 1 to 9999; give dates within them.")
            }
            guard campground.sites[site] != nil else { throw Self.unknownSite(site) }
            guard campground.campers[camperId] != nil else {
                throw AppError(.notFound, "There is no camper '\(camperId)'.", listedBy: "campers")
            }
            var problem: String?
            if nights <= 0 {
                problem = Self.invalidNights.problem
            } else if campground.reservations.contains(where: { $0.site == site && $0.status == .reserved && $0.overlaps(from: date, to: end) }) {
                problem = Self.siteTaken.problem
            }
            return [
                .reservationRecorded(
                    ReservationRecorded(
                        reservationId: campground.nextReservationId, camperId: camperId, site: site, dateFrom: date, nights: nights,
                        status: problem == nil ? .reserved : .invalid, problem: problem))
            ]
        case let .cancel(reservationId):
            guard let reservation = campground.reservation(reservationId) else {
                throw AppError(.notFound, "There is no reservation '\(reservationId)'.", listedBy: "reservations")
            }
            guard reservation.status == .reserved else {
                throw AppError(.invalidState, "Reservation \(reservationId) is \(reservation.status.rawValue); only reserved stays can be cancelled.")
            }
            return [.reservationCancelled(ReservationCancelled(reservationId: reservationId))]
        }
    }

    private static func unknownSite(_ number: Int) -> AppError {
        AppError(.notFound, "There is no site \(number).", listedBy: "campsites")
    }
}
