@testable import Apps
import EventStoreCore
import Foundation
import Testing

/// The campground events' hand-written decoder (`CampgroundEvent(view:)`, the fast path of the
/// campground's projections) against the `Decodable` one (`CampgroundEvent(recorded:)`).
@Suite("Campground events decoded by hand")
struct CampgroundEventBytesTests {
    static let samples: [(type: String, data: String)] = {
        var samples: [(String, String)] = []
        samples += [
            #"{"camperId":"C1","contact":{"fullName":"Ann","phoneNumber":"555"}}"#, #"{"contact":{"phoneNumber":"5","fullName":"A"},"camperId":"C1","x":[]}"#,
            #"{"camperId":"C1","contact":{"fullName":"A\"n\u00e9","phoneNumber":""}}"#, #"{"camperId":"C1","contact":{"$forgotten":"camper:C1"}}"#,
            #"{"camperId":"C1","contact":{"fullName":"A"}}"#, #"{"camperId":"C1","contact":{"fullName":1,"phoneNumber":"5"}}"#,
            #"{"camperId":"C1","contact":null}"#, #"{"camperId":"C1","contact":[]}"#, #"{"camperId":1,"contact":{"fullName":"A","phoneNumber":"5"}}"#,
            #"{"camperId":"C1","fullName":"A","phoneNumber":"5"}"#, #"{"c\u0061mperId":"C1","contact":{"fullName":"A","phoneNumber":"5"}}"#,
            #"{"camperId":"C1","contact":{"f\u0075llName":"A","phoneNumber":"5"}}"#, "{}", "[]", "",
        ].map { (CamperAdded.eventType, $0) }
        samples += [
            #"{"number":1,"electricity":true,"water":false}"#, #"{"water":true,"electricity":false,"number":-3,"x":{}}"#,
            #"{"number":1.5,"electricity":true,"water":false}"#, #"{"number":1,"electricity":"true","water":false}"#, #"{"number":1,"electricity":true}"#,
            #"{"number":9223372036854775808,"electricity":true,"water":false}"#, #"{"number":1,"number":2,"electricity":true,"water":false}"#,
            #"{"number":null,"electricity":true,"water":false}"#, "{}",
        ].map { (SiteAdded.eventType, $0) }
        samples += [#"{"number":7}"#, #"{"number":"7"}"#, #"{"number":1e2}"#, "{}", #"{"n\u0075mber":7}"#].map { (SiteDeleted.eventType, $0) }
        let reservation = #""reservationId":"R1","camperId":"C1","site":2"#
        samples += [
            #"{\#(reservation),"dateFrom":"2026-03-01","nights":2,"dateTo":"2026-03-03","status":"Reserved","problem":null}"#,
            #"{\#(reservation),"dateFrom":"2026-03-01","nights":2,"status":"Reserved"}"#,
            #"{\#(reservation),"dateFrom":"2026-03-01","nights":0,"status":"Invalid","problem":"Nights must be 1 or more."}"#,
            #"{"status":"Cancelled","nights":-1,"dateFrom":"0001-01-01",\#(reservation)}"#,
            #"{\#(reservation),"dateFrom":"2026-02-30","nights":2,"status":"Reserved"}"#, #"{\#(reservation),"dateFrom":"2026-3-01","nights":2,"status":"Reserved"}"#,
            #"{\#(reservation),"dateFrom":20260301,"nights":2,"status":"Reserved"}"#, #"{\#(reservation),"dateFrom":"2026-03-01","nights":2,"status":"reserved"}"#,
            #"{\#(reservation),"dateFrom":"2026-03-01","nights":2.5,"status":"Reserved"}"#, #"{\#(reservation),"dateFrom":"2026-03-01","nights":2,"status":"Reserved","problem":1}"#,
            #"{\#(reservation),"dateFrom":"2026-03-01","nights":2,"status":"Reserved","problem":"x\ny"}"#, #"{\#(reservation),"dateFrom":"2026-03-01","status":"Reserved"}"#,
            #"{"reservationId":"R1","camperId":"C1","site":"2","dateFrom":"2026-03-01","nights":2,"status":"Reserved"}"#,
        ].map { (ReservationRecorded.eventType, $0) }
        samples += [#"{"reservationId":"R1"}"#, #"{"reservationId":null}"#, "{}", #"{"reservationId":"R1","reservationId":"R2"}"#].map {
            (ReservationCancelled.eventType, $0)
        }
        samples += [("Other", "{}")]
        return samples
    }()

    @Test("every sample decodes by hand as through Decodable: the same value, or the same error")
    func sameAsDecodable() throws {
        try expectDecodedAlike(CampgroundEvent.self, stream: "campground-default", Self.samples)
    }

    @Test("the shapes the apps write are taken by hand, not left to Decodable")
    func appShapesTakenByHand() throws {
        // Given each event as the apps record it, when the hand path reads it, then it takes it as written
        let date = CivilDate(day: 20_600)
        let events: [CampgroundEvent] = [
            .camperAdded(CamperAdded(camperId: "C1", fullName: "Ann \"A\" Lee", phoneNumber: "555-0100")),
            .siteAdded(SiteAdded(number: 3, electricity: true, water: false)), .siteDeleted(SiteDeleted(number: 3)),
            .reservationRecorded(ReservationRecorded(reservationId: "R1", camperId: "C1", site: 3, dateFrom: date, nights: 2, status: .reserved, problem: nil)),
            .reservationRecorded(
                ReservationRecorded(reservationId: "R2", camperId: "C1", site: 3, dateFrom: date, nights: 0, status: .invalid, problem: "Nights must be 1 or more.")),
            .reservationCancelled(ReservationCancelled(reservationId: "R1")),
        ]
        try expectTakenByHand(events, stream: "campground-default")
    }
}
