import Commands
import Projections
import Testing

@Suite("Campground rules")
struct CampgroundDeciderTests {
    func given(_ events: [CampgroundEvent]) -> Campground {
        var campground = Campground()
        events.forEach { campground.apply($0) }
        return campground
    }

    func refused(_ command: CampgroundCommand, _ campground: Campground) -> CommandError? {
        do {
            _ = try CampgroundDecider.decide(command, campground: campground)
            return nil
        } catch {
            return error
        }
    }

    let johnny = CampgroundEvent.camperAdded(CamperAdded(camperId: "C1", fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"))
    let bacon = CampgroundEvent.camperAdded(CamperAdded(camperId: "C2", fullName: "Bacon Lover", phoneNumber: "910-543-9000"))
    let site15 = CampgroundEvent.siteAdded(SiteAdded(number: 15, electricity: true, water: false))
    let june1 = CivilDate("2026-06-01")!

    func reservation(_ id: String, camper: String = "C1", site: Int = 15, from: String, nights: Int, status: ReservationStatus, problem: String? = nil) -> CampgroundEvent {
        .reservationRecorded(ReservationRecorded(
            reservationId: id, camperId: camper, site: site, dateFrom: CivilDate(from)!, nights: nights, status: status, problem: problem))
    }

    @Test("campers get ids in order; a camper needs a name and a phone number")
    func campers() throws {
        #expect(try CampgroundDecider.decide(.addCamper(fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"), campground: given([])) == johnny)
        #expect(try CampgroundDecider.decide(.addCamper(fullName: "Bacon Lover", phoneNumber: "910-543-9000"), campground: given([johnny])) == bacon)
        #expect(refused(.addCamper(fullName: " ", phoneNumber: "1"), given([]))?.code == .invalidInput)
        #expect(refused(.addCamper(fullName: "A", phoneNumber: ""), given([]))?.code == .invalidInput)
    }

    @Test("a site number exists once and is positive")
    func sites() throws {
        #expect(try CampgroundDecider.decide(.addSite(number: 15, electricity: true, water: false), campground: given([])) == site15)
        #expect(refused(.addSite(number: 15, electricity: false, water: false), given([site15]))?.code == .duplicate)
        #expect(refused(.addSite(number: 0, electricity: false, water: false), given([]))?.code == .invalidInput)
        #expect(refused(.addSite(number: -3, electricity: false, water: false), given([]))?.code == .invalidInput)
    }

    @Test("the next site number is the highest plus 1: {1, 10, 30, 31} gives 32; none gives 1")
    func nextSiteNumber() {
        #expect(given([]).nextSiteNumber == 1)
        let sites = [1, 10, 30, 31].map { CampgroundEvent.siteAdded(SiteAdded(number: $0, electricity: false, water: false)) }
        #expect(given(sites).nextSiteNumber == 32)
        #expect(given(sites + [.siteDeleted(SiteDeleted(number: 31))]).nextSiteNumber == 31)
    }

    @Test("a reservation runs from the date for the nights given, and is Reserved")
    func reserving() throws {
        let event = try CampgroundDecider.decide(.reserve(site: 15, camperId: "C1", date: june1, nights: 3), campground: given([johnny, site15]))
        #expect(event == reservation("R1", from: "2026-06-01", nights: 3, status: .reserved))
        if case let .reservationRecorded(recorded) = event {
            #expect(recorded.dateTo.description == "2026-06-04")
        }
    }

    @Test("a reservation for -1 nights (or 0) is recorded Invalid with \"Invalid number of days\"")
    func invalidNights() throws {
        for nights in [-1, 0] {
            let event = try CampgroundDecider.decide(.reserve(site: 15, camperId: "C1", date: june1, nights: nights), campground: given([johnny, site15]))
            #expect(event == reservation("R1", from: "2026-06-01", nights: nights, status: .invalid, problem: "Invalid number of days"))
        }
        #expect(CampgroundDecider.errorDomain == "CampingManager" && CampgroundDecider.invalidNights.code == 5)
    }

    @Test("two reserved stays of one site may not overlap: the second is recorded Invalid")
    func overlaps() throws {
        let booked = given([johnny, bacon, site15, reservation("R1", from: "2026-06-01", nights: 3, status: .reserved)])
        for (date, nights) in [("2026-06-03", 2), ("2026-05-30", 3), ("2026-06-02", 1), ("2026-05-01", 60)] {
            let event = try CampgroundDecider.decide(.reserve(site: 15, camperId: "C2", date: CivilDate(date)!, nights: nights), campground: booked)
            #expect(event == reservation("R2", camper: "C2", from: date, nights: nights, status: .invalid, problem: "Site already reserved for those dates"))
        }
        // Back to back is fine, and so is a stay over a cancelled one.
        #expect(try CampgroundDecider.decide(.reserve(site: 15, camperId: "C2", date: CivilDate("2026-06-04")!, nights: 2), campground: booked)
            == reservation("R2", camper: "C2", from: "2026-06-04", nights: 2, status: .reserved))
        let cancelled = given([johnny, bacon, site15, reservation("R1", from: "2026-06-01", nights: 3, status: .reserved), .reservationCancelled(ReservationCancelled(reservationId: "R1"))])
        #expect(try CampgroundDecider.decide(.reserve(site: 15, camperId: "C2", date: june1, nights: 3), campground: cancelled)
            == reservation("R2", camper: "C2", from: "2026-06-01", nights: 3, status: .reserved))
    }

    @Test("reserving an unknown site or camper is an error and records nothing")
    func unknowns() {
        #expect(refused(.reserve(site: 16, camperId: "C1", date: june1, nights: 1), given([johnny, site15]))?.code == .notFound)
        #expect(refused(.reserve(site: 15, camperId: "C9", date: june1, nights: 1), given([johnny, site15]))?.code == .notFound)
    }

    @Test("a site with active reservations cannot be deleted; unknown sites are not found")
    func deletingSites() throws {
        let booked = given([johnny, site15, reservation("R1", from: "2026-06-01", nights: 3, status: .reserved)])
        #expect(refused(.deleteSite(15), booked)?.code == .invalidState)
        #expect(refused(.deleteSite(99), booked)?.code == .notFound)
        let invalidOnly = given([johnny, site15, reservation("R1", from: "2026-06-01", nights: -1, status: .invalid, problem: "Invalid number of days")])
        #expect(try CampgroundDecider.decide(.deleteSite(15), campground: invalidOnly) == .siteDeleted(SiteDeleted(number: 15)))
    }

    @Test("only a reserved stay can be cancelled")
    func cancelling() throws {
        let booked = given([johnny, site15, reservation("R1", from: "2026-06-01", nights: 3, status: .reserved),
                            reservation("R2", from: "2026-06-01", nights: 0, status: .invalid, problem: "Invalid number of days")])
        #expect(try CampgroundDecider.decide(.cancel(reservationId: "R1"), campground: booked) == .reservationCancelled(ReservationCancelled(reservationId: "R1")))
        #expect(refused(.cancel(reservationId: "R2"), booked)?.code == .invalidState)
        #expect(refused(.cancel(reservationId: "R7"), booked)?.code == .notFound)
    }

    @Test("dates are YYYY-MM-DD and real")
    func dates() {
        #expect(CivilDate("2024-02-29")?.description == "2024-02-29")
        for bad in ["2023-02-29", "2026-13-01", "2026-1-01", "26-01-01", "2026-01-01T00:00", "0000-01-01", "abcd-ef-gh", ""] {
            #expect(CivilDate(bad) == nil, "\(bad)")
        }
        #expect(CivilDate("2026-12-30")?.adding(days: 3).description == "2027-01-02")
    }
}
