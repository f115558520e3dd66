import Projections

/// What the campground's desk can do.
public enum CampgroundCommand: Sendable, Equatable {
    case addCamper(fullName: String, phoneNumber: String)
    case addSite(number: Int, electricity: Bool, water: Bool)
    case deleteSite(Int)
    case reserve(site: Int, camperId: String, date: CivilDate, nights: Int)
    case cancel(reservationId: String)
}

/// The campground's rules, as a pure function of the campground and the command.
public enum CampgroundDecider {
    /// The error domain of the reservation problems, as the original app named it.
    public static let errorDomain = "CampingManager"
    /// The problem and error code of a reservation of 0 nights or fewer.
    public static let invalidNights = (problem: "Invalid number of days", code: 5)
    /// The problem and error code of a reservation overlapping another of the same site (beyond the original).
    public static let siteTaken = (problem: "Site already reserved for those dates", code: 6)

    /// Decides what `command` records. Refusals (nothing recorded): an empty name, a site number
    /// below 1 or taken, an unknown site, camper or reservation, a site with reservations, a
    /// reservation that is not reserved. A reservation of 0 nights or fewer, or overlapping a
    /// reserved stay of the same site, is recorded with status "Invalid" and its problem.
    public static func decide(_ command: CampgroundCommand, campground: Campground) throws(CommandError) -> CampgroundEvent {
        switch command {
        case let .addCamper(fullName, phoneNumber):
            try Validate.text(fullName, "camper's full name")
            try Validate.text(phoneNumber, "camper's phone number")
            return .camperAdded(CamperAdded(camperId: campground.nextCamperId, fullName: fullName, phoneNumber: phoneNumber))
        case let .addSite(number, electricity, water):
            guard number >= 1, number <= 1_000_000_000 else {
                throw CommandError(.invalidInput, "The site number \(number) is not a positive number; give 1 or more.")
            }
            guard campground.sites[number] == nil else {
                throw CommandError(.duplicate, "Site \(number) already exists; the next free number is \(campground.nextSiteNumber).")
            }
            return .siteAdded(SiteAdded(number: number, electricity: electricity, water: water))
        case let .deleteSite(number):
            guard campground.sites[number] != nil else { throw unknownSite(number) }
            let active = campground.reservations.filter { $0.site == number && $0.status == .reserved }
            guard active.isEmpty else {
                throw CommandError(
                    .invalidState, "Site \(number) has active reservations (\(active.map(\.id).joined(separator: ", "))); cancel them first.")
            }
            return .siteDeleted(SiteDeleted(number: number))
        case let .reserve(site, camperId, date, nights):
            guard nights >= -36_500, nights <= 36_500 else {
                throw CommandError(.invalidInput, "A stay of \(nights) nights is out of range; give at most 36500.")
            }
            guard campground.sites[site] != nil else { throw unknownSite(site) }
            guard campground.campers[camperId] != nil else {
                throw CommandError(.notFound, "There is no camper '\(camperId)'; `esctl query campers` (with the same --campground) lists them.")
            }
            var problem: String?
            if nights <= 0 {
                problem = invalidNights.problem
            } else {
                let end = date.adding(days: nights)
                if campground.reservations.contains(where: { $0.site == site && $0.status == .reserved && $0.overlaps(from: date, to: end) }) {
                    problem = siteTaken.problem
                }
            }
            return .reservationRecorded(
                ReservationRecorded(
                    reservationId: campground.nextReservationId, camperId: camperId, site: site, dateFrom: date, nights: nights,
                    status: problem == nil ? .reserved : .invalid, problem: problem))
        case let .cancel(reservationId):
            guard let reservation = campground.reservation(reservationId) else {
                throw CommandError(.notFound, "There is no reservation '\(reservationId)'; `esctl query reservations` (with the same --campground) lists them.")
            }
            guard reservation.status == .reserved else {
                throw CommandError(.invalidState, "Reservation \(reservationId) is \(reservation.status.rawValue); only reserved stays can be cancelled.")
            }
            return .reservationCancelled(ReservationCancelled(reservationId: reservationId))
        }
    }

    private static func unknownSite(_ number: Int) -> CommandError {
        CommandError(.notFound, "There is no site \(number); `esctl query campsites` (with the same --campground) lists them.")
    }
}
