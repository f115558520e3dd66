import Projections

// The campground's row encodings, written by hand: the same bytes their `Codable` conformances
// give (fields in declaration order, an optional with its marker, a status as its raw text, a
// date as its day number), without the generic `Codable` machinery a rebuild paid for every row
// it wrote. `CampgroundRowTests` holds each against its `Codable` encoding.

extension Camper {
    public func encode(to writer: inout RowWriter) {
        writer.write(id)
        writer.write(fullName)
        writer.write(phoneNumber)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        self.init(id: try reader.read(String.self), fullName: try reader.read(String.self), phoneNumber: try reader.read(String.self))
    }
}

extension Campsite {
    public func encode(to writer: inout RowWriter) {
        writer.write(number)
        writer.write(electricity)
        writer.write(water)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        self.init(number: try reader.read(Int.self), electricity: try reader.read(Bool.self), water: try reader.read(Bool.self))
    }
}

extension Reservation {
    public func encode(to writer: inout RowWriter) {
        writer.write(id)
        writer.write(camperId)
        writer.write(site)
        dateFrom.encode(to: &writer)
        dateTo.encode(to: &writer)
        writer.write(status.rawValue)
        writer.write(problem)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        let id = try reader.read(String.self)
        let camperId = try reader.read(String.self)
        let site = try reader.read(Int.self)
        let dateFrom = try CivilDate(from: &reader)
        let dateTo = try CivilDate(from: &reader)
        let statusText = try reader.read(String.self)
        guard let status = ReservationStatus(rawValue: statusText) else {
            throw RowDecodingError("'\(statusText)' is not a reservation's status")
        }
        self.init(id: id, camperId: camperId, site: site, dateFrom: dateFrom, dateTo: dateTo, status: status, problem: try reader.read(String?.self))
    }
}
