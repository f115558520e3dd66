import EventStoreCore
import Projections

/// A campground's event, as its projections fold it: the row key of its campground (the key
/// every row of that campground starts with) and the event, decoded by hand where it can be
/// (``CampgroundEvent/init(view:)``).
public struct CampgroundFold: Sendable {
    /// The campground's part of every row key: its name, as a key.
    public var campground: RowKey
    /// The event.
    public var event: CampgroundEvent

    public init(campground: RowKey, event: CampgroundEvent) {
        self.campground = campground
        self.event = event
    }

    /// The event of a campground's stream; nil for another stream. Throws the event's
    /// `EventDecodingError`.
    static func decode(_ view: EventView) throws -> CampgroundFold? {
        guard let campground = campgroundKey(ofStream: view.streamUTF8) else { return nil }
        return CampgroundFold(campground: campground, event: try CampgroundEvent(view: view))
    }

    /// The campground's key of a stream: its name after `campground-`; nil for another stream.
    /// The campground's rows were keyed by the name's characters (`String.hasPrefix`), where a
    /// combining mark or a joiner right after the `-` makes one character of the two and the
    /// name no campground's. A name that goes on in ASCII has the prefix as bytes exactly when
    /// as characters; one that goes on otherwise is read as characters, as it was.
    static func campgroundKey(ofStream stream: UnsafeRawBufferPointer) -> RowKey? {
        let prefix = AppStreams.campgroundPrefix
        guard let key = AppStreams.rowKey(ofStream: stream, prefix: prefix) else { return nil }
        if stream[prefix.utf8.count] < 0x80 { return key }
        return AppStreams.key(of: String(decoding: stream, as: UTF8.self), prefix: prefix).map { RowKey($0) }
    }
}

/// The number in an id such as "C12" or "R3", for ordering; ids of another shape sort last.
private func sequence(of id: String) -> Int {
    Int(id.dropFirst()) ?? Int.max
}

/// The row key of an id within a campground: its number, then the id itself, so that keys sort
/// as the ids were given (C2 before C10) and each id has one row.
private func idKey(_ campground: RowKey, _ id: String) -> RowKey {
    campground.appending(sequence(of: id)).appending(id)
}

/// The JSON of a page of rows, with the cursor of the next page: `{"items":[...],"next":...}`.
private func pageJSON<V>(_ rows: PageRows<V>, cursor: (RowKey, V) -> JSONValue, item: (V) throws -> JSONValue) rethrows -> JSONValue {
    ["items": .array(try rows.rows.map { try item($0.value) }), "next": rows.continuation.map { cursor($0.key, $0.value) } ?? .null]
}

/// Each campground's campers, in the order added. Query parameter: `campground`.
///
/// A ``TypedProjection``: its events are decoded by hand from their bytes
/// (``CampgroundEvent/init(view:)``).
public struct CampersProjection: TypedProjection {
    public let name = "campers"
    public let version = 3
    public let tables = ["campers"]
    public let eventTypes: Set<String>? = [CamperAdded.eventType]
    /// Anyone may append to a campground's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("campground", "the campground (default: default)")] + Page.parameters

    public init() {}

    public func decode(_ event: EventView) throws -> CampgroundFold? { try CampgroundFold.decode(event) }

    public func apply(_ fold: CampgroundFold, to state: inout ProjectionState) throws {
        guard case let .camperAdded(added) = fold.event else { return }
        try state.put(
            "campers", idKey(fold.campground, added.camperId),
            Camper(id: added.camperId, fullName: added.fullName, phoneNumber: added.phoneNumber))
    }

    /// `[{"id","fullName","phoneNumber"}]`, in the order added; with `limit` (and a camper id as
    /// the cursor), `{"items":[...],"next":ID|null}`.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let campground = RowKey(parameters.value("campground", default: AppStreams.defaultKey))
        if let page = try Page(parameters, projection: name) {
            let rows = try await state.page("campers", prefix: campground, page, cursorKey: { idKey(campground, $0) }, as: Camper.self)
            return try pageJSON(rows, cursor: { _, camper in .string(camper.id) }, item: JSONValueEncoder.encode)
        }
        return .array(try await state.rows("campers", prefix: campground, as: Camper.self).map { try JSONValueEncoder.encode($0.value) })
    }
}

/// Each campground's sites, sorted by number, and the next site number. Query parameter:
/// `campground`.
///
/// A ``TypedProjection``: its events are decoded by hand from their bytes
/// (``CampgroundEvent/init(view:)``).
public struct CampsitesProjection: TypedProjection {
    public let name = "campsites"
    public let version = 3
    public let tables = ["sites"]
    public let eventTypes: Set<String>? = [SiteAdded.eventType, SiteDeleted.eventType]
    /// Anyone may append to a campground's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("campground", "the campground (default: default)")] + Page.parameters

    public init() {}

    public func decode(_ event: EventView) throws -> CampgroundFold? { try CampgroundFold.decode(event) }

    public func apply(_ fold: CampgroundFold, to state: inout ProjectionState) throws {
        switch fold.event {
        case let .siteAdded(added):
            try state.put(
                "sites", fold.campground.appending(added.number),
                Campsite(number: added.number, electricity: added.electricity, water: added.water))
        case let .siteDeleted(deleted):
            try state.delete("sites", fold.campground.appending(deleted.number))
        case .camperAdded, .reservationRecorded, .reservationCancelled:
            return
        }
    }

    /// `{"nextSiteNumber","sites":[{"number","electricity","water"}]}`; with `limit` (and a site
    /// number as the cursor), `"next"` beside `sites`: the number to continue after, or null.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let campground = RowKey(parameters.value("campground", default: AppStreams.defaultKey))
        let highest = try await state.rows("sites", prefix: campground, reverse: true, limit: 1, as: Campsite.self).first?.value.number
        let next: JSONValue = .int(Campground.number(after: highest))
        if let page = try Page(parameters, projection: name) {
            let rows = try await state.page("sites", prefix: campground, page, cursorKey: { Int($0).map { campground.appending($0) } }, as: Campsite.self)
            return [
                "nextSiteNumber": next, "sites": .array(try rows.rows.map { try JSONValueEncoder.encode($0.value) }),
                "next": rows.continuation.map { .int($0.value.number) } ?? .null,
            ]
        }
        let sites = try await state.rows("sites", prefix: campground, as: Campsite.self).map(\.value)
        return ["nextSiteNumber": next, "sites": .array(try sites.map(JSONValueEncoder.encode))]
    }
}

/// Each campground's reservations, listed by camper, by site or by date. Query parameters:
/// `campground`, `camper`, `site`, `date` (the reserved stays covering that date).
///
/// A ``TypedProjection``: its events are decoded by hand from their bytes
/// (``CampgroundEvent/init(view:)``).
public struct ReservationsProjection: TypedProjection {
    public let name = "reservations"
    public let version = 3
    public let tables = ["reservations"]
    public let eventTypes: Set<String>? = [ReservationRecorded.eventType, ReservationCancelled.eventType]
    /// Anyone may append to a campground's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [
        QueryParameter("campground", "the campground (default: default)"), QueryParameter("camper", "only this camper's reservations"),
        QueryParameter("site", "only this site's reservations"),
        QueryParameter("date", "only the stays Reserved on this YYYY-MM-DD"),
    ] + Page.parameters

    public init() {}

    public func decode(_ event: EventView) throws -> CampgroundFold? { try CampgroundFold.decode(event) }

    public func apply(_ fold: CampgroundFold, to state: inout ProjectionState) throws {
        switch fold.event {
        case let .reservationRecorded(recorded):
            try state.put("reservations", idKey(fold.campground, recorded.reservationId), Reservation(recorded))
        case let .reservationCancelled(cancelled):
            let key = idKey(fold.campground, cancelled.reservationId)
            guard var reservation = try state.get("reservations", key, as: Reservation.self) else { return }
            reservation.status = .cancelled
            try state.put("reservations", key, reservation)
        case .camperAdded, .siteAdded, .siteDeleted:
            return
        }
    }

    /// `[{"id","camper","site","dateFrom","dateTo","status","problem"}]` in the order recorded,
    /// narrowed by camper, site and date; with `limit` (and a reservation id as the cursor),
    /// `{"items":[...],"next":ID|null}`.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let campground = RowKey(parameters.value("campground", default: AppStreams.defaultKey))
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
        let camper = parameters["camper"]
        let include = { (_: RowKey, reservation: Reservation) -> Bool in
            (camper.map { $0 == reservation.camperId } ?? true) && (site.map { $0 == reservation.site } ?? true)
                && (date.map { reservation.status == .reserved && reservation.covers($0) } ?? true)
        }
        if let page = try Page(parameters, projection: name) {
            let rows = try await state.page(
                "reservations", prefix: campground, page, cursorKey: { idKey(campground, $0) }, as: Reservation.self, where: include)
            return pageJSON(rows, cursor: { _, reservation in .string(reservation.id) }, item: \.json)
        }
        var matching: [JSONValue] = []
        try await state.forEachRow("reservations", prefix: campground, after: nil, reverse: false, as: Reservation.self) { key, reservation in
            if include(key, reservation) { matching.append(reservation.json) }
            return true
        }
        return .array(matching)
    }
}
