import EventStoreCore
import Projections

/// A camper.
public struct Camper: Sendable, Equatable, Codable, RowValue {
    public var id: String
    public var fullName: String
    public var phoneNumber: String

    public init(id: String, fullName: String, phoneNumber: String) {
        self.id = id
        self.fullName = fullName
        self.phoneNumber = phoneNumber
    }
}

/// A campsite.
public struct Campsite: Sendable, Equatable, Codable, RowValue {
    public var number: Int
    public var electricity: Bool
    public var water: Bool

    public init(number: Int, electricity: Bool, water: Bool) {
        self.number = number
        self.electricity = electricity
        self.water = water
    }
}

/// A reservation as it stands.
public struct Reservation: Sendable, Equatable, Codable, RowValue {
    public var id: String
    public var camperId: String
    public var site: Int
    public var dateFrom: CivilDate
    public var dateTo: CivilDate
    public var status: ReservationStatus
    public var problem: String?

    public init(
        id: String, camperId: String, site: Int, dateFrom: CivilDate, dateTo: CivilDate, status: ReservationStatus, problem: String?
    ) {
        self.id = id
        self.camperId = camperId
        self.site = site
        self.dateFrom = dateFrom
        self.dateTo = dateTo
        self.status = status
        self.problem = problem
    }

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

    /// `{"id","camper","site","dateFrom","dateTo","status","problem"}`.
    public var json: JSONValue {
        [
            "id": .string(id), "camper": .string(camperId), "site": .int(site), "dateFrom": .string(dateFrom.description),
            "dateTo": .string(dateTo.description), "status": .string(status.rawValue), "problem": .string(problem),
        ]
    }
}

/// A campground: the fold of its stream, as the commands need it.
public struct Campground: Sendable, Equatable, Codable {
    public private(set) var campers: [String: Camper] = [:]
    public private(set) var camperCount = 0
    public private(set) var sites: [Int: Campsite] = [:]
    /// Every reservation, in the order recorded (of a part of the campground: those folded).
    public private(set) var reservations: [Reservation] = []
    /// The number of the last reservation id given (`R7`: 7): the next is one more, also when
    /// only part of the campground was folded (its site's reservations and the last one).
    public private(set) var lastReservationNumber = 0

    public init() {}

    /// The highest site number plus one; 1 when there are no sites. Gaps are not filled.
    public var nextSiteNumber: Int { Self.number(after: sites.keys.max()) }

    /// The number after `highest` (1 when none), never past `Int.max` (a hand-appended site may be that high).
    public static func number(after highest: Int?) -> Int {
        guard let highest else { return 1 }
        let (next, overflow) = highest.addingReportingOverflow(1)
        return overflow ? .max : max(next, 1)
    }

    /// The id the next camper gets.
    public var nextCamperId: String { "C\(camperCount + 1)" }
    /// The id the next reservation gets.
    public var nextReservationId: String { "R\(Self.number(after: lastReservationNumber))" }

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
            // Ids are R1, R2, ...: one given by hand otherwise counts as the next number.
            let given = event.reservationId.hasPrefix("R") ? Int(event.reservationId.dropFirst()) : nil
            lastReservationNumber = max(Self.number(after: lastReservationNumber), given ?? 0)
        case let .reservationCancelled(event):
            if let index = reservations.firstIndex(where: { $0.id == event.reservationId }) {
                reservations[index].status = .cancelled
            }
        }
    }
}
