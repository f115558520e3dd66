import Projections

// The alert queue's row encoding, written by hand: the same bytes its `Codable` conformance gives
// (its one field, the alerts; each alert's fields in declaration order, its enums' raw values as
// strings), without the generic `Codable` machinery. `AlertRowTests` holds it against `Codable`.

extension AlertQueue {
    public func encode(to writer: inout RowWriter) {
        writer.write(alerts)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        self.init(alerts: try reader.read([Alert].self))
    }
}

extension Alert {
    public func encode(to writer: inout RowWriter) {
        writer.write(name?.rawValue)
        writer.write(text)
        writer.write(severity.rawValue)
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        let name = try reader.read(String?.self)
        let text = try reader.read(String.self)
        let severity = try reader.read(String.self)
        guard let known = Severity(rawValue: severity) else { throw RowDecodingError("'\(severity)' is not a severity") }
        guard let name else {
            self.init(text: text, severity: known)
            return
        }
        guard let alert = AlertName(rawValue: name) else { throw RowDecodingError("'\(name)' is not an alert") }
        self.init(name: alert, text: text, severity: known)
    }
}
