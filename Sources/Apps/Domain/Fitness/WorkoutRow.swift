import Projections

/// `Workout`'s row encoding, written by hand: the same bytes its `Codable` conformance gives
/// (fields in declaration order; the raw values of its enums as strings), without the generic
/// `Codable` machinery, which took a fifth of a rebuild's time for this one row type.
/// `WorkoutRowTests` holds the two encodings against each other.
extension Workout {
    public func encode(to writer: inout RowWriter) {
        writer.write(status.rawValue)
        writer.write(goal)
        writer.write(steps)
        writer.write(distance)
        writer.write(nessie)
        writer.write(sentAlerts.map(\.rawValue))
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        let status = try reader.read(String.self)
        guard let known = WorkoutStatus(rawValue: status) else { throw RowDecodingError("'\(status)' is not a workout state") }
        self.init()
        self.status = known
        goal = try reader.read(Int?.self)
        steps = try reader.read(Int.self)
        distance = try reader.read(Double.self)
        nessie = try reader.read(Double.self)
        sentAlerts = try reader.read([String].self).map { name throws(RowDecodingError) in
            guard let alert = AlertName(rawValue: name) else { throw RowDecodingError("'\(name)' is not an alert") }
            return alert
        }
    }
}
