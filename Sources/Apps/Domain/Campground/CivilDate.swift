import EventStoreCore
import Projections

/// A calendar date without a time zone, written YYYY-MM-DD: in JSON as that text, in rows as its
/// day number (8 bytes). The apps take dates from 0001-01-01 to 9999-12-31.
public struct CivilDate: Sendable, Hashable, Comparable, CustomStringConvertible, Codable, RowValue {
    /// Days since 1970-01-01.
    public let day: Int64

    public init(day: Int64) {
        self.day = day
    }

    /// Parses exactly YYYY-MM-DD (a real date, years 0001 to 9999); nil otherwise.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), year >= 1, let month = number(5..<7), let day = number(8..<10),
            let days = ISO8601.daysSinceEpoch(year: year, month: month, day: day)
        else { return nil }
        self.day = days
    }

    /// The first and last day the apps take: 0001-01-01 and 9999-12-31.
    public static let range = CivilDate(day: -719_162)...CivilDate(day: 2_932_896)

    /// This date plus `days` (which may be negative), kept within the days an Int64 holds (a
    /// recorded event with absurd nights must not trap a fold).
    public func adding(days: Int) -> CivilDate {
        let (sum, overflow) = day.addingReportingOverflow(Int64(days))
        return CivilDate(day: overflow ? (days > 0 ? .max : .min) : sum)
    }

    public func encode(to writer: inout RowWriter) { writer.write(day) }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        day = try reader.read(Int64.self)
    }

    public var description: String {
        let (year, month, day) = ISO8601.civilDate(daysSinceEpoch: self.day)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(abs(value))
            return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool { lhs.day < rhs.day }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = CivilDate(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a YYYY-MM-DD date: \(text)"))
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
