import Apps
import Commands
@testable import EventStoreCore
@testable import EventStoreLMDB
import EventStoreTesting
import Foundation
import Testing

/// The campground's bookings decided by dynamic consistency boundaries: a reservation reads its
/// site, its camper and the last reservation only, and appends on the condition that none of
/// them changed; the answers are the domain's, on every backend.
@Suite("Campground bookings by query: only the site's and camper's events read, the same answers")
struct CampgroundBookingTests {
    static let day = CivilDate("2026-07-01") ?? CivilDate(day: 0)

    /// Sites 15 and 16, campers C1 and C2, and a reservation of each site.
    func given(_ f: DomainFixture) async throws {
        for number in [15, 16] { _ = try await f.backend.campground(.addSite(number: number, electricity: true, water: false)) }
        _ = try await f.backend.campground(.addCamper(fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"))
        _ = try await f.backend.campground(.addCamper(fullName: "Bacon Lover", phoneNumber: "910-543-9000"))
        _ = try await f.backend.campground(.reserve(site: 15, camperId: "C1", date: Self.day, nights: 2))
        _ = try await f.backend.campground(.reserve(site: 16, camperId: "C2", date: Self.day, nights: 2))
    }

    @Test("a reservation reads only its site, its camper and the last reservation, and gets the next id", arguments: Backend.allCases)
    func readsItsPart(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            // Given two sites, two campers and a reservation of each site
            try await given(f)
            // When C2 reserves site 15 after C1's stay
            let outcome = try await f.backend.campground(.reserve(site: 15, camperId: "C2", date: Self.day.adding(days: 2), nights: 1))
            // Then it is reserved as R3, and the command folded site 15, camper C2 and R2 only
            #expect(outcome.reservation?.id == "R3" && outcome.reservation?.status == .reserved)
            #expect(Set(outcome.campground.sites.keys) == [15])
            #expect(Set(outcome.campground.campers.keys) == ["C2"])
            #expect(outcome.campground.reservations.map(\.id) == ["R1", "R2", "R3"])
            // And its event carries the campground's, the site's and the camper's tags
            #expect(outcome.recorded.map(\.tags) == [["campground:default", "site:15", "camper:C2"]])
            // And the whole campground agrees with what the commands decided
            let whole = try await f.backend.campground(named: AppStreams.defaultKey)
            #expect(whole.reservations.map(\.id) == ["R1", "R2", "R3"] && whole.nextReservationId == "R4")
        }
    }

    @Test("the domain's answers hold: an overlap is recorded Invalid, unknown sites and campers are refused, site numbers are unique", arguments: Backend.allCases)
    func sameAnswers(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            try await given(f)
            // When site 15 is reserved again over C1's stay, then it is recorded Invalid with the domain's problem
            let error = await #expect(throws: AppError.self) {
                _ = try await f.backend.campground(.reserve(site: 15, camperId: "C2", date: Self.day.adding(days: 1), nights: 2))
            }
            #expect(error?.code == .recordedInvalid && error?.message.hasPrefix("Site already reserved for those dates") == true)
            // And a cancelled stay frees its dates (the cancellation carries the site's tag)
            _ = try await f.backend.campground(.cancel(reservationId: "R1"))
            let again = try await f.backend.campground(.reserve(site: 15, camperId: "C2", date: Self.day.adding(days: 1), nights: 2))
            #expect(again.reservation?.id == "R4" && again.reservation?.status == .reserved)
            // And an unknown site or camper is refused, nothing recorded
            let head = try await f.store.headPosition()
            await #expect(throws: AppError.self) { _ = try await f.backend.campground(.reserve(site: 99, camperId: "C1", date: Self.day, nights: 1)) }
            await #expect(throws: AppError.self) { _ = try await f.backend.campground(.reserve(site: 16, camperId: "C9", date: Self.day, nights: 1)) }
            // And a site number is refused the second time, naming the next free one
            let duplicate = await #expect(throws: AppError.self) { _ = try await f.backend.campground(.addSite(number: 15, electricity: false, water: false)) }
            #expect(duplicate?.message == "Site 15 already exists; the next free number is 17.")
            #expect(try await f.store.headPosition() == head)
        }
    }

    @Test("16 desks reserving the same site for the same night: exactly one is reserved, the others recorded Invalid with their own ids", arguments: Backend.allCases)
    func racingDesks(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            // Given site 15 and a camper
            _ = try await f.backend.campground(.addSite(number: 15, electricity: true, water: true))
            _ = try await f.backend.campground(.addCamper(fullName: "Johnny Appleseed", phoneNumber: "408-555-1234"))
            let backendApp = f.backend
            // When 16 desks reserve it at once (a command retries when its condition fails)
            let statuses = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        do {
                            return try await backendApp.campground(.reserve(site: 15, camperId: "C1", date: Self.day, nights: 1)).reservation?.status.rawValue ?? "?"
                        } catch let error as AppError where error.code == .recordedInvalid {
                            return "Invalid"
                        } catch let error as CommandError {
                            return "conflict: \(error.attempts)"
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            // Then exactly one stay is reserved
            let reservations = try await f.backend.campground(named: AppStreams.defaultKey).reservations
            #expect(reservations.filter { $0.status == .reserved }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == "Reserved" }.count == 1, "\(statuses)")
            // And every recorded reservation has its own id
            #expect(Set(reservations.map(\.id)).count == reservations.count)
        }
    }

    @Test("a campground recorded before tags is decided whole, and keeps its answers", arguments: Backend.allCases)
    func untaggedCampground(_ backend: Backend) async throws {
        try await withDomain(backend) { f in
            // Given a campground whose events carry no tags (as an older version wrote them)
            let stream = AppStreams.campground(AppStreams.defaultKey)
            _ = try await f.store.append(
                to: stream,
                events: [
                    try SiteAdded(number: 15, electricity: true, water: true).newEvent(),
                    try CamperAdded(camperId: "C1", fullName: "Johnny Appleseed", phoneNumber: "408-555-1234").newEvent(),
                ])
            // When a site is reserved, then it is reserved (decided on the whole stream)
            let outcome = try await f.backend.campground(.reserve(site: 15, camperId: "C1", date: Self.day, nights: 1))
            #expect(outcome.reservation?.id == "R1" && outcome.reservation?.status == .reserved)
            #expect(outcome.campground.campers.keys.contains("C1"))
        }
    }
}
