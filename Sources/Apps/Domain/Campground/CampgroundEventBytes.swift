import EventStoreCore

/// The campground events decoded by hand for the shapes the apps write
/// (`{"camperId":I,"contact":{"fullName":N,"phoneNumber":P}}`, `{"number":N,"electricity":B,
/// "water":B}`, `{"number":N}`, a reservation's seven members with `dateTo` ignored and `problem`
/// null or absent when there is none, `{"reservationId":I}`; members in any order, others
/// ignored); anything else through ``init(recorded:)``, a forgotten camper's contact included
/// (`CampgroundEventBytesTests` holds the two paths together).
extension CampgroundEvent: HandDecodedEvent {
    /// The event when the hand-written path takes its data; nil to leave it to `Decodable`.
    public static func decodedByHand(_ view: EventView) -> CampgroundEvent? {
        let type = view.typeUTF8
        let data = view.data
        if type.elementsEqual(ReservationRecorded.eventType.utf8) {
            var fields = FieldValues(["reservationId", "camperId", "site", "dateFrom", "nights", "status", "problem"])
            guard fields.read(data), let reservationId = fields.string(0), let camperId = fields.string(1), let site = fields.integer(2),
                let dateFrom = fields.string(3).flatMap(CivilDate.init), let nights = fields.integer(4),
                let status = fields.string(5).flatMap(ReservationStatus.init(rawValue:))
            else { return nil }
            var problem: String?
            if !fields.isMissingOrNull(6) {
                guard let text = fields.string(6) else { return nil }
                problem = text
            }
            return .reservationRecorded(
                ReservationRecorded(
                    reservationId: reservationId, camperId: camperId, site: site, dateFrom: dateFrom, nights: nights, status: status, problem: problem))
        }
        if type.elementsEqual(ReservationCancelled.eventType.utf8) {
            var fields = FieldValues(["reservationId"])
            guard fields.read(data), let reservationId = fields.string(0) else { return nil }
            return .reservationCancelled(ReservationCancelled(reservationId: reservationId))
        }
        if type.elementsEqual(SiteAdded.eventType.utf8) {
            var fields = FieldValues(["number", "electricity", "water"])
            guard fields.read(data), let number = fields.integer(0), let electricity = fields.bool(1), let water = fields.bool(2) else { return nil }
            return .siteAdded(SiteAdded(number: number, electricity: electricity, water: water))
        }
        if type.elementsEqual(SiteDeleted.eventType.utf8) {
            var fields = FieldValues(["number"])
            guard fields.read(data), let number = fields.integer(0) else { return nil }
            return .siteDeleted(SiteDeleted(number: number))
        }
        if type.elementsEqual(CamperAdded.eventType.utf8) {
            // A forgotten contact holds its marker, not the two strings: Decodable reads it.
            var fields = FieldValues(["camperId", "contact"])
            var contact = FieldValues(["fullName", "phoneNumber"])
            guard fields.read(data), let camperId = fields.string(0), let contactData = fields.raw(1), contact.read(contactData),
                let fullName = contact.string(0), let phoneNumber = contact.string(1)
            else { return nil }
            return .camperAdded(CamperAdded(camperId: camperId, fullName: fullName, phoneNumber: phoneNumber))
        }
        return nil
    }
}
