import EventStore

/// A camper was added to the campground.
public struct CamperAdded: DomainEvent {
    public static let type = "CamperAdded"
    public var camperId: String
    public var fullName: String
    public var phoneNumber: String
    public init(camperId: String, fullName: String, phoneNumber: String) {
        self.camperId = camperId
        self.fullName = fullName
        self.phoneNumber = phoneNumber
    }
    public var json: JSONValue {
        ["camperId": .string(camperId), "fullName": .string(fullName), "phoneNumber": .string(phoneNumber)]
    }
    public init(fields: EventFields) throws(DomainDataError) {
        camperId = try fields.string("camperId")
        fullName = try fields.string("fullName")
        phoneNumber = try fields.string("phoneNumber")
    }
}

/// A site was added.
public struct SiteAdded: DomainEvent {
    public static let type = "SiteAdded"
    public var number: Int
    public var electricity: Bool
    public var water: Bool
    public init(number: Int, electricity: Bool, water: Bool) {
        self.number = number
        self.electricity = electricity
        self.water = water
    }
    public var json: JSONValue { ["number": .int(number), "electricity": .bool(electricity), "water": .bool(water)] }
    public init(fields: EventFields) throws(DomainDataError) {
        number = try fields.int("number")
        electricity = try fields.bool("electricity")
        water = try fields.bool("water")
    }
}

/// A site was deleted.
public struct SiteDeleted: DomainEvent {
    public static let type = "SiteDeleted"
    public var number: Int
    public init(number: Int) { self.number = number }
    public var json: JSONValue { ["number": .int(number)] }
    public init(fields: EventFields) throws(DomainDataError) { number = try fields.int("number") }
}

/// The state of a reservation.
public enum ReservationStatus: String, Sendable, Codable, CaseIterable {
    case reserved = "Reserved"
    case invalid = "Invalid"
    case cancelled = "Cancelled"
}

/// A reservation was recorded: "Reserved", or "Invalid" with the problem (an invalid number of
/// nights, or a site already reserved for those dates), kept on record.
public struct ReservationRecorded: DomainEvent {
    public static let type = "ReservationRecorded"
    public var reservationId: String
    public var camperId: String
    public var site: Int
    public var dateFrom: CivilDate
    public var nights: Int
    public var status: ReservationStatus
    public var problem: String?

    public init(
        reservationId: String, camperId: String, site: Int, dateFrom: CivilDate, nights: Int, status: ReservationStatus,
        problem: String?
    ) {
        self.reservationId = reservationId
        self.camperId = camperId
        self.site = site
        self.dateFrom = dateFrom
        self.nights = nights
        self.status = status
        self.problem = problem
    }

    /// The date plus the nights.
    public var dateTo: CivilDate { dateFrom.adding(days: nights) }

    public var json: JSONValue {
        [
            "reservationId": .string(reservationId), "camperId": .string(camperId), "site": .int(site),
            "dateFrom": .string(dateFrom.description), "nights": .int(nights), "dateTo": .string(dateTo.description),
            "status": .string(status.rawValue), "problem": .string(problem),
        ]
    }

    public init(fields: EventFields) throws(DomainDataError) {
        reservationId = try fields.string("reservationId")
        camperId = try fields.string("camperId")
        site = try fields.int("site")
        guard let date = CivilDate(try fields.string("dateFrom")) else { throw DomainDataError("ReservationRecorded needs \"dateFrom\" as YYYY-MM-DD") }
        dateFrom = date
        nights = try fields.int("nights")
        guard let status = ReservationStatus(rawValue: try fields.string("status")) else {
            throw DomainDataError("ReservationRecorded has an unknown status")
        }
        self.status = status
        problem = try fields.optionalString("problem")
    }

    private enum CodingKeys: String, CodingKey {
        case reservationId, camperId, site, dateFrom, nights, dateTo, status, problem
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reservationId = try container.decode(String.self, forKey: .reservationId)
        camperId = try container.decode(String.self, forKey: .camperId)
        site = try container.decode(Int.self, forKey: .site)
        dateFrom = try container.decode(CivilDate.self, forKey: .dateFrom)
        nights = try container.decode(Int.self, forKey: .nights)
        status = try container.decode(ReservationStatus.self, forKey: .status)
        problem = try container.decodeIfPresent(String.self, forKey: .problem)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reservationId, forKey: .reservationId)
        try container.encode(camperId, forKey: .camperId)
        try container.encode(site, forKey: .site)
        try container.encode(dateFrom, forKey: .dateFrom)
        try container.encode(nights, forKey: .nights)
        try container.encode(dateTo, forKey: .dateTo)
        try container.encode(status, forKey: .status)
        try container.encode(problem, forKey: .problem)
    }
}

/// A reserved reservation was cancelled.
public struct ReservationCancelled: DomainEvent {
    public static let type = "ReservationCancelled"
    public var reservationId: String
    public init(reservationId: String) { self.reservationId = reservationId }
    public var json: JSONValue { ["reservationId": .string(reservationId)] }
    public init(fields: EventFields) throws(DomainDataError) {
        reservationId = try fields.string("reservationId")
    }
}

/// Every event of a campground's stream.
public enum CampgroundEvent: Sendable, Equatable {
    case camperAdded(CamperAdded)
    case siteAdded(SiteAdded)
    case siteDeleted(SiteDeleted)
    case reservationRecorded(ReservationRecorded)
    case reservationCancelled(ReservationCancelled)

    public static let types: Set<String> = [
        CamperAdded.type, SiteAdded.type, SiteDeleted.type, ReservationRecorded.type, ReservationCancelled.type,
    ]

    public init(_ recorded: RecordedEvent) throws(DomainDataError) {
        switch recorded.type {
        case CamperAdded.type: self = .camperAdded(try CamperAdded(recorded))
        case SiteAdded.type: self = .siteAdded(try SiteAdded(recorded))
        case SiteDeleted.type: self = .siteDeleted(try SiteDeleted(recorded))
        case ReservationRecorded.type: self = .reservationRecorded(try ReservationRecorded(recorded))
        case ReservationCancelled.type: self = .reservationCancelled(try ReservationCancelled(recorded))
        default: throw DomainDataError("\(recorded.type) is not a campground event")
        }
    }

    public var newEvent: NewEvent {
        switch self {
        case let .camperAdded(event): return event.newEvent
        case let .siteAdded(event): return event.newEvent
        case let .siteDeleted(event): return event.newEvent
        case let .reservationRecorded(event): return event.newEvent
        case let .reservationCancelled(event): return event.newEvent
        }
    }
}
