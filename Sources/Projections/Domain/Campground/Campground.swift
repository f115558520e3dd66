import EventStore
/// A camper.
public struct Camper: Sendable, Equatable, RowValue {
    public var id: String
    public var fullName: String
    public var phoneNumber: String

    public init(id: String, fullName: String, phoneNumber: String) {
        self.id = id
        self.fullName = fullName
        self.phoneNumber = phoneNumber
    }

    public func encode(to writer: inout RowWriter) {
        writer.write(id)
        writer.write(fullName)
        writer.write(phoneNumber)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        id = try reader.read(String.self)
        fullName = try reader.read(String.self)
        phoneNumber = try reader.read(String.self)
    }

    public var json: JSONValue { ["id": .string(id), "fullName": .string(fullName), "phoneNumber": .string(phoneNumber)] }
}

/// A campsite.
public struct Campsite: Sendable, Equatable, RowValue {
    public var number: Int
    public var electricity: Bool
    public var water: Bool

    public init(number: Int, electricity: Bool, water: Bool) {
        self.number = number
        self.electricity = electricity
        self.water = water
    }

    public func encode(to writer: inout RowWriter) {
        writer.write(number)
        writer.write(electricity)
        writer.write(water)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        number = try reader.read(Int.self)
        electricity = try reader.read(Bool.self)
        water = try reader.read(Bool.self)
    }

    public var json: JSONValue { ["number": .int(number), "electricity": .bool(electricity), "water": .bool(water)] }
}

/// A reservation as it stands.
public struct Reservation: Sendable, Equatable, RowValue {
    public var id: String
    public var camperId: String
    public var site: Int
    public var dateFrom: CivilDate
    public var dateTo: CivilDate
    public var status: ReservationStatus
    public var problem: String?

    public init(_ recorded: ReservationRecorded) {
        id = recorded.reservationId
        camperId = recorded.camperId
        site = recorded.site
        dateFrom = recorded.dateFrom
        dateTo = recorded.dateTo
        status = recorded.status
        problem = recorded.problem
    }

    /// Whether a reserved stay covers `date` (from its first night, up to the day it ends).
    public func covers(_ date: CivilDate) -> Bool { dateFrom <= date && date < dateTo }

    /// Whether two stays share a night.
    public func overlaps(from: CivilDate, to: CivilDate) -> Bool { dateFrom < to && from < dateTo }

    public func encode(to writer: inout RowWriter) {
        writer.write(id)
        writer.write(camperId)
        writer.write(site)
        writer.write(dateFrom.day)
        writer.write(dateTo.day)
        writer.write(status.rawValue)
        writer.write(problem)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        id = try reader.read(String.self)
        camperId = try reader.read(String.self)
        site = try reader.read(Int.self)
        dateFrom = CivilDate(day: try reader.read(Int64.self))
        dateTo = CivilDate(day: try reader.read(Int64.self))
        guard let status = ReservationStatus(rawValue: try reader.read(String.self)) else { throw RowDecodingError("unknown reservation status") }
        self.status = status
        problem = try reader.read(String?.self)
    }

    /// `{"id","camper","site","dateFrom","dateTo","status","problem"}`.
    public var json: JSONValue {
        [
            "id": .string(id), "camper": .string(camperId), "site": .int(site), "dateFrom": .string(dateFrom.description),
            "dateTo": .string(dateTo.description), "status": .string(status.rawValue), "problem": .string(problem),
        ]
    }
}

/// A campground: the fold of its stream, as the commands need it.
public struct Campground: Sendable, Equatable {
    public private(set) var campers: [String: Camper] = [:]
    public private(set) var camperCount = 0
    public private(set) var sites: [Int: Campsite] = [:]
    /// Every reservation, in the order recorded.
    public private(set) var reservations: [Reservation] = []

    public init() {}

    /// The highest site number plus one; 1 when there are no sites. Gaps are not filled.
    public var nextSiteNumber: Int { (sites.keys.max() ?? 0) + 1 }

    /// The id the next camper gets.
    public var nextCamperId: String { "C\(camperCount + 1)" }
    /// The id the next reservation gets.
    public var nextReservationId: String { "R\(reservations.count + 1)" }

    /// The reservation with this id.
    public func reservation(_ id: String) -> Reservation? { reservations.first { $0.id == id } }

    /// Folds one event in.
    public mutating func apply(_ event: CampgroundEvent) {
        switch event {
        case let .camperAdded(event):
            campers[event.camperId] = Camper(id: event.camperId, fullName: event.fullName, phoneNumber: event.phoneNumber)
            camperCount += 1
        case let .siteAdded(event):
            sites[event.number] = Campsite(number: event.number, electricity: event.electricity, water: event.water)
        case let .siteDeleted(event):
            sites[event.number] = nil
        case let .reservationRecorded(event):
            reservations.append(Reservation(event))
        case let .reservationCancelled(event):
            if let index = reservations.firstIndex(where: { $0.id == event.reservationId }) {
                reservations[index].status = .cancelled
            }
        }
    }
}
