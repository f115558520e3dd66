import EventStore
import Projections

/// The key of a campground-scoped row: the campground, then the row's own parts.
private func campgroundKey(_ event: RecordedEvent) -> RowKey? {
    AppStreams.key(of: event.stream, prefix: AppStreams.campgroundPrefix).map { RowKey($0) }
}

/// The number in an id such as "C12" or "R3", for ordering; ids of another shape sort last.
private func sequence(of id: String) -> Int {
    Int(id.dropFirst()) ?? Int.max
}

/// Each campground's campers, in the order added. Query parameter: `campground`.
public struct CampersProjection: Projection {
    public let name = "campers"
    public let version = 2
    public let tables = ["campers"]
    public let eventTypes: Set<String>? = [CamperAdded.eventType]
    /// Anyone may append to a campground's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("campground", "the campground (default: default)")]

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let campground = campgroundKey(event) else { return }
        let added = try CamperAdded(recorded: event)
        try state.put(
            "campers", campground.appending(added.camperId),
            Camper(id: added.camperId, fullName: added.fullName, phoneNumber: added.phoneNumber))
    }

    /// `[{"id","fullName","phoneNumber"}]`, in the order added.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let campground = parameters.value("campground", default: AppStreams.defaultKey)
        let campers = try state.rows("campers", prefix: RowKey(campground), as: Camper.self).map(\.value)
        return .array(try campers.sorted { (sequence(of: $0.id), $0.id) < (sequence(of: $1.id), $1.id) }.map(JSONValueEncoder.encode))
    }
}

/// Each campground's sites, sorted by number, and the next site number. Query parameter:
/// `campground`.
public struct CampsitesProjection: Projection {
    public let name = "campsites"
    public let version = 3
    public let tables = ["sites"]
    public let eventTypes: Set<String>? = [SiteAdded.eventType, SiteDeleted.eventType]
    /// Anyone may append to a campground's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("campground", "the campground (default: default)")]

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let campground = campgroundKey(event) else { return }
        if event.type == SiteAdded.eventType {
            let added = try SiteAdded(recorded: event)
            try state.put(
                "sites", campground.appending(added.number),
                Campsite(number: added.number, electricity: added.electricity, water: added.water))
        } else {
            let deleted = try SiteDeleted(recorded: event)
            try state.delete("sites", campground.appending(deleted.number))
        }
    }

    /// `{"nextSiteNumber","sites":[{"number","electricity","water"}]}`.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let campground = parameters.value("campground", default: AppStreams.defaultKey)
        let sites = try state.rows("sites", prefix: RowKey(campground), as: Campsite.self).map(\.value)
        return ["nextSiteNumber": .int(Campground.number(after: sites.last?.number)), "sites": .array(try sites.map(JSONValueEncoder.encode))]
    }
}

/// Each campground's reservations, listed by camper, by site or by date. Query parameters:
/// `campground`, `camper`, `site`, `date` (the reserved stays covering that date).
public struct ReservationsProjection: Projection {
    public let name = "reservations"
    public let version = 2
    public let tables = ["reservations"]
    public let eventTypes: Set<String>? = [ReservationRecorded.eventType, ReservationCancelled.eventType]
    /// Anyone may append to a campground's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [
        QueryParameter("campground", "the campground (default: default)"), QueryParameter("camper", "only this camper's reservations"),
        QueryParameter("site", "only this site's reservations"),
        QueryParameter("date", "only the stays Reserved on this YYYY-MM-DD"),
    ]

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let campground = campgroundKey(event) else { return }
        if event.type == ReservationRecorded.eventType {
            let recorded = try ReservationRecorded(recorded: event)
            try state.put("reservations", campground.appending(recorded.reservationId), Reservation(recorded))
        } else {
            let cancelled = try ReservationCancelled(recorded: event)
            let key = campground.appending(cancelled.reservationId)
            guard var reservation = try state.get("reservations", key, as: Reservation.self) else { return }
            reservation.status = .cancelled
            try state.put("reservations", key, reservation)
        }
    }

    /// `[{"id","camper","site","dateFrom","dateTo","status","problem"}]` in the order recorded,
    /// narrowed by camper, site and date.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let campground = parameters.value("campground", default: AppStreams.defaultKey)
        var site: Int?
        if let text = parameters["site"] {
            guard let number = Int(text) else {
                throw ProjectionError(.invalidQuery, "The site '\(text)' is not a number; give a site number.", projection: name)
            }
            site = number
        }
        var date: CivilDate?
        if let text = parameters["date"] {
            guard let parsed = CivilDate(text) else {
                throw ProjectionError(.invalidQuery, "The date '\(text)' is not a date; give it as YYYY-MM-DD.", projection: name)
            }
            date = parsed
        }
        let reservations = try state.rows("reservations", prefix: RowKey(campground), as: Reservation.self).map(\.value)
            .filter { reservation in
                (parameters["camper"].map { $0 == reservation.camperId } ?? true)
                    && (site.map { $0 == reservation.site } ?? true)
                    && (date.map { reservation.status == .reserved && reservation.covers($0) } ?? true)
            }
            .sorted { (sequence(of: $0.id), $0.id) < (sequence(of: $1.id), $1.id) }
        return .array(reservations.map(\.json))
    }
}
