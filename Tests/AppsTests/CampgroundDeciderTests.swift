import Apps
import Commands
import Testing
import TestSupport

@Suite("Campground rules")
struct CampgroundDeciderTests {
    let desk = DeciderScenario(CampgroundDecider(campground: "lakeside"))

    let johnny = CampgroundEvent.camperAdded(CamperAdded(camperId: "C1", fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"))
    let bacon = CampgroundEvent.camperAdded(CamperAdded(camperId: "C2", fullName: "Bacon Lover", phoneNumber: "910-543-9000"))
    let site15 = CampgroundEvent.siteAdded(SiteAdded(number: 15, electricity: true, water: false))
    let june1 = CivilDate("2026-06-01") ?? CivilDate(day: 0)

    func reservation(_ id: String, camper: String = "C1", site: Int = 15, from: String, nights: Int, status: ReservationStatus, problem: String? = nil) -> CampgroundEvent {
        .reservationRecorded(ReservationRecorded(
            reservationId: id, camperId: camper, site: site, dateFrom: CivilDate(from) ?? CivilDate(day: 0), nights: nights, status: status, problem: problem))
    }

    @Test("campers get ids in order; a camper needs a name and a phone number")
    func campers() {
        desk.when(.addCamper(fullName: "Johnny Appleseed", phoneNumber: "408-555-1234")).then(johnny)
        desk.given(johnny).when(.addCamper(fullName: "Bacon Lover", phoneNumber: "910-543-9000")).then(bacon)
        desk.when(.addCamper(fullName: " ", phoneNumber: "1")).thenRefused(.invalidInput)
        desk.when(.addCamper(fullName: "A", phoneNumber: "")).thenRefused(.invalidInput)
        desk.when(.addCamper(fullName: String(repeating: "A", count: 201), phoneNumber: "1"))
            .thenRefused(.invalidInput, "The camper's full name is 201 characters long; the limit is 200.")
    }

    @Test("a site number exists once and is positive")
    func sites() {
        desk.when(.addSite(number: 15, electricity: true, water: false)).then(site15)
        desk.given(site15).when(.addSite(number: 15, electricity: false, water: false)).thenRefused(.duplicate)
        desk.when(.addSite(number: 0, electricity: false, water: false)).thenRefused(.invalidInput)
        desk.when(.addSite(number: -3, electricity: false, water: false)).thenRefused(.invalidInput)
        desk.when(.addSite(number: .max, electricity: false, water: false))
            .thenRefused(.invalidInput, "The site number 9223372036854775807 is too large; give a number from 1 to 1000000000.")
    }

    @Test("the next site number is the highest plus 1: {1, 10, 30, 31} gives 32; none gives 1")
    func nextSiteNumber() {
        #expect(desk.state.nextSiteNumber == 1)
        let sites = [1, 10, 30, 31].map { CampgroundEvent.siteAdded(SiteAdded(number: $0, electricity: false, water: false)) }
        #expect(desk.given(sites).state.nextSiteNumber == 32)
        #expect(desk.given(sites).given(.siteDeleted(SiteDeleted(number: 31))).state.nextSiteNumber == 31)
    }

    @Test("a reservation runs from the date for the nights given, and is Reserved")
    func reserving() {
        let outcome = desk.given(johnny, site15).when(.reserve(site: 15, camperId: "C1", date: june1, nights: 3))
        outcome.then(reservation("R1", from: "2026-06-01", nights: 3, status: .reserved))
        if case let .reservationRecorded(recorded)? = outcome.events()?.first {
            #expect(recorded.dateTo.description == "2026-06-04")
        }
    }

    @Test("a reservation for -1 nights (or 0) is recorded Invalid with \"Invalid number of days\"")
    func invalidNights() {
        for nights in [-1, 0] {
            desk.given(johnny, site15).when(.reserve(site: 15, camperId: "C1", date: june1, nights: nights))
                .then(reservation("R1", from: "2026-06-01", nights: nights, status: .invalid, problem: "Invalid number of days"))
        }
        #expect(CampgroundDecider.errorDomain == "CampingManager" && CampgroundDecider.invalidNights.code == 5)
    }

    @Test("two reserved stays of one site may not overlap: the second is recorded Invalid")
    func overlaps() throws {
        let booked = desk.given(johnny, bacon, site15, reservation("R1", from: "2026-06-01", nights: 3, status: .reserved))
        for (date, nights) in [("2026-06-03", 2), ("2026-05-30", 3), ("2026-06-02", 1), ("2026-05-01", 60)] {
            booked.when(.reserve(site: 15, camperId: "C2", date: try #require(CivilDate(date)), nights: nights))
                .then(reservation("R2", camper: "C2", from: date, nights: nights, status: .invalid, problem: "Site already reserved for those dates"))
        }
        // Back to back is fine, and so is a stay over a cancelled one.
        booked.when(.reserve(site: 15, camperId: "C2", date: try #require(CivilDate("2026-06-04")), nights: 2))
            .then(reservation("R2", camper: "C2", from: "2026-06-04", nights: 2, status: .reserved))
        booked.given(.reservationCancelled(ReservationCancelled(reservationId: "R1")))
            .when(.reserve(site: 15, camperId: "C2", date: june1, nights: 3))
            .then(reservation("R2", camper: "C2", from: "2026-06-01", nights: 3, status: .reserved))
    }

    @Test("reserving an unknown site or camper is an error and records nothing")
    func unknowns() {
        desk.given(johnny, site15).when(.reserve(site: 16, camperId: "C1", date: june1, nights: 1))
            .thenThrows(AppError(.notFound, "There is no site 16.", listedBy: "campsites"))
        desk.given(johnny, site15).when(.reserve(site: 15, camperId: "C9", date: june1, nights: 1))
            .thenThrows(AppError(.notFound, "There is no camper 'C9'.", listedBy: "campers"))
    }

    @Test("a site with active reservations cannot be deleted; unknown sites are not found")
    func deletingSites() {
        let booked = desk.given(johnny, site15, reservation("R1", from: "2026-06-01", nights: 3, status: .reserved))
        booked.when(.deleteSite(15)).thenRefused(.invalidState, "Site 15 has active reservations (R1); cancel them first.")
        booked.when(.deleteSite(99)).thenRefused(.notFound)
        desk.given(johnny, site15, reservation("R1", from: "2026-06-01", nights: -1, status: .invalid, problem: "Invalid number of days"))
            .when(.deleteSite(15)).then(.siteDeleted(SiteDeleted(number: 15)))
    }

    @Test("only a reserved stay can be cancelled")
    func cancelling() {
        let booked = desk.given(
            johnny, site15, reservation("R1", from: "2026-06-01", nights: 3, status: .reserved),
            reservation("R2", from: "2026-06-01", nights: 0, status: .invalid, problem: "Invalid number of days"))
        booked.when(.cancel(reservationId: "R1")).then(.reservationCancelled(ReservationCancelled(reservationId: "R1")))
        booked.when(.cancel(reservationId: "R2")).thenRefused(.invalidState)
        booked.when(.cancel(reservationId: "R7")).thenThrows(AppError(.notFound, "There is no reservation 'R7'.", listedBy: "reservations"))
    }

    @Test("dates are YYYY-MM-DD and real")
    func dates() {
        #expect(CivilDate("2024-02-29")?.description == "2024-02-29")
        for bad in ["2023-02-29", "2026-13-01", "2026-1-01", "26-01-01", "2026-01-01T00:00", "0000-01-01", "abcd-ef-gh", ""] {
            #expect(CivilDate(bad) == nil, "\(bad)")
        }
        #expect(CivilDate("2026-12-30")?.adding(days: 3).description == "2027-01-02")
    }

    @Test("a stay must begin and end within the years 1 to 9999, and have at most 36,500 nights either way")
    func dateBounds() throws {
        let lastDay = try #require(CivilDate("9999-12-31"))
        let booked = desk.given(johnny, site15)
        booked.when(.reserve(site: 15, camperId: "C1", date: lastDay, nights: 2))
            .thenRefused(.invalidInput, "A stay from 9999-12-31 for 2 nights ends on 10000-01-02, outside the years 1 to 9999; give dates within them.")
        booked.when(.reserve(site: 15, camperId: "C1", date: june1, nights: 36_501)).thenRefused(.invalidInput)
        booked.when(.reserve(site: 15, camperId: "C1", date: june1, nights: .min)).thenRefused(.invalidInput)
        booked.when(.reserve(site: 15, camperId: "C1", date: try #require(CivilDate("9999-12-30")), nights: 1))
            .then(reservation("R1", from: "9999-12-30", nights: 1, status: .reserved))
    }
}
