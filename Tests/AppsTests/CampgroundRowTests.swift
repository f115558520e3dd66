@testable import Apps
import Foundation
import Projections
import Testing

/// The fields of `Camper`, `Campsite` and `Reservation`, in their order, encoded through
/// `Codable`: what their hand-written row encodings must match byte for byte (stored states and
/// their hashes depend on it).
private struct CodableCamper: Codable, RowValue, Equatable {
    var id: String
    var fullName: String
    var phoneNumber: String
}

private struct CodableCampsite: Codable, RowValue, Equatable {
    var number: Int
    var electricity: Bool
    var water: Bool
}

private struct CodableReservation: Codable, RowValue, Equatable {
    var id: String
    var camperId: String
    var site: Int
    var dateFrom: CivilDate
    var dateTo: CivilDate
    var status: ReservationStatus
    var problem: String?
}

@Suite("Campground rows")
struct CampgroundRowTests {
    @Test("the hand-written encodings are the Codable ones, byte for byte, and decode back")
    func sameBytes() throws {
        for camper in [Camper(id: "C1", fullName: "Ann 🎉", phoneNumber: "555"), Camper(id: "", fullName: "", phoneNumber: "")] {
            // Given a camper, when encoded by hand and through Codable, then the bytes agree and decode back
            let codable = CodableCamper(id: camper.id, fullName: camper.fullName, phoneNumber: camper.phoneNumber)
            #expect(camper.encoded == codable.encoded)
            #expect(try Camper(decoding: camper.encoded) == camper)
        }
        for site in [Campsite(number: 3, electricity: true, water: false), Campsite(number: .min, electricity: false, water: true)] {
            let codable = CodableCampsite(number: site.number, electricity: site.electricity, water: site.water)
            #expect(site.encoded == codable.encoded)
            #expect(try Campsite(decoding: site.encoded) == site)
        }
        let reservations = ReservationStatus.allCases.map { status in
            Reservation(
                id: "R1", camperId: "C1", site: 2, dateFrom: CivilDate(day: 20_600), dateTo: CivilDate(day: .max), status: status,
                problem: status == .invalid ? "taken" : nil)
        }
        for reservation in reservations {
            let codable = CodableReservation(
                id: reservation.id, camperId: reservation.camperId, site: reservation.site, dateFrom: reservation.dateFrom, dateTo: reservation.dateTo,
                status: reservation.status, problem: reservation.problem)
            #expect(reservation.encoded == codable.encoded)
            #expect(try Reservation(decoding: reservation.encoded) == reservation)
            #expect(try CodableReservation(decoding: reservation.encoded) == codable)
        }
    }

    @Test("a stored status that is none of the three is refused, as through Codable")
    func unknownStatus() throws {
        // Given a reservation's row whose status reads "Maybe"
        var writer = RowWriter()
        writer.write("R1")
        writer.write("C1")
        writer.write(2)
        writer.write(Int64(0))
        writer.write(Int64(1))
        writer.write("Maybe")
        writer.write(String?.none)
        // When it is read by hand and through Codable, then both refuse it
        #expect(throws: RowDecodingError.self) { try Reservation(decoding: writer.bytes) }
        #expect(throws: RowDecodingError.self) { try CodableReservation(decoding: writer.bytes) }
    }
}
