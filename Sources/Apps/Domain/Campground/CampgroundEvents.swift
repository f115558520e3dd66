import Commands
import EventStoreCore

/// A camper was added to the campground.
///
/// Version 2 keeps the camper's personal data together under `contact`
/// (`{"camperId":"C1","contact":{"fullName":…,"phoneNumber":…}}`); version 1 had the two fields
/// beside the id. Records of version 1 read as version 2 through ``CampgroundUpcasters``.
public struct CamperAdded: EventData, Equatable {
    public static let eventType = "CamperAdded"
    public static let schemaVersion: UInt16 = 2
    public var camperId: String
    public var contact: CamperContact

    public init(camperId: String, fullName: String, phoneNumber: String) {
        self.camperId = camperId
        self.contact = CamperContact(fullName: fullName, phoneNumber: phoneNumber)
    }

    /// The camper's contact is personal to `camper:ID`; forgotten, it reads as ``CamperContact/forgotten``.
    public var personalData: [PersonalData] { [PersonalData(subject: Self.subject(camperId), fields: ["contact"])] }

    /// The subject a camper's personal data belongs to: `camper:ID`.
    public static func subject(_ camperId: String) -> String { "camper:\(camperId)" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        camperId = try container.decode(String.self, forKey: .camperId)
        contact = try container.decode(CamperContact.self, forKey: .contact, orWhenForgotten: .forgotten)
    }

    /// The camper's full name.
    public var fullName: String { contact.fullName }
    /// The camper's phone number.
    public var phoneNumber: String { contact.phoneNumber }
}

/// How to reach a camper: the personal part of ``CamperAdded``.
public struct CamperContact: Codable, Sendable, Equatable {
    public var fullName: String
    public var phoneNumber: String
    public init(fullName: String, phoneNumber: String) {
        self.fullName = fullName
        self.phoneNumber = phoneNumber
    }

    /// What a forgotten camper's contact reads as: nothing of it is kept.
    public static let forgotten = CamperContact(fullName: "", phoneNumber: "")
}

/// The steps of the campground events' schema evolution, for ``StoreConfiguration/upcasters``.
public enum CampgroundUpcasters {
    /// `CamperAdded` 1 → 2: `fullName` and `phoneNumber` move under `contact`.
    public static let camperContact = Upcaster(CamperAdded.eventType, from: 1) { data in
        guard case let .object(members) = data else { return data }
        var rest: [(String, JSONValue)] = []
        var contact: [(String, JSONValue)] = []
        for (key, value) in members {
            if key == "fullName" || key == "phoneNumber" { contact.append((key, value)) } else { rest.append((key, value)) }
        }
        // Data already in the new shape (appended by hand without its schema version) stays as it is.
        guard !contact.isEmpty, !rest.contains(where: { $0.0 == "contact" }) else { return data }
        return .object(rest + [("contact", .object(contact))])
    }

    /// Every step.
    public static let all: [Upcaster] = [camperContact]
}

/// A site was added.
public struct SiteAdded: EventData, Equatable {
    public static let eventType = "SiteAdded"
    public var number: Int
    public var electricity: Bool
    public var water: Bool
    public init(number: Int, electricity: Bool, water: Bool) {
        self.number = number
        self.electricity = electricity
        self.water = water
    }
}

/// A site was deleted.
public struct SiteDeleted: EventData, Equatable {
    public static let eventType = "SiteDeleted"
    public var number: Int
    public init(number: Int) { self.number = number }
}

/// The state of a reservation.
public enum ReservationStatus: String, Sendable, Codable, CaseIterable {
    case reserved = "Reserved"
    case invalid = "Invalid"
    case cancelled = "Cancelled"
}

/// A reservation was recorded: "Reserved", or "Invalid" with the problem (an invalid number of
/// nights, or a site already reserved for those dates), kept on record. Its data also carries
/// `dateTo` (the date plus the nights), for readers of the log; it is derived, not read back.
public struct ReservationRecorded: EventData, Equatable {
    public static let eventType = "ReservationRecorded"
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
public struct ReservationCancelled: EventData, Equatable {
    public static let eventType = "ReservationCancelled"
    public var reservationId: String
    public init(reservationId: String) { self.reservationId = reservationId }
}

/// Every event of a campground's stream.
public enum CampgroundEvent: RecordableEvent, Equatable {
    case camperAdded(CamperAdded)
    case siteAdded(SiteAdded)
    case siteDeleted(SiteDeleted)
    case reservationRecorded(ReservationRecorded)
    case reservationCancelled(ReservationCancelled)

    public static let types: Set<String> = [
        CamperAdded.eventType, SiteAdded.eventType, SiteDeleted.eventType, ReservationRecorded.eventType,
        ReservationCancelled.eventType,
    ]

    public init(recorded event: RecordedEvent) throws(EventDecodingError) {
        switch event.type {
        case CamperAdded.eventType: self = .camperAdded(try CamperAdded(recorded: event))
        case SiteAdded.eventType: self = .siteAdded(try SiteAdded(recorded: event))
        case SiteDeleted.eventType: self = .siteDeleted(try SiteDeleted(recorded: event))
        case ReservationRecorded.eventType: self = .reservationRecorded(try ReservationRecorded(recorded: event))
        case ReservationCancelled.eventType: self = .reservationCancelled(try ReservationCancelled(recorded: event))
        default: throw EventDecodingError(event, reason: "\(event.type) is not a campground event")
        }
    }

    public func newEvent() throws -> NewEvent {
        switch self {
        case let .camperAdded(event): return try event.newEvent()
        case let .siteAdded(event): return try event.newEvent()
        case let .siteDeleted(event): return try event.newEvent()
        case let .reservationRecorded(event): return try event.newEvent()
        case let .reservationCancelled(event): return try event.newEvent()
        }
    }
}
