/// Formats and parses UTC timestamps as ISO 8601 text (`2026-11-22T08:30:00.000000Z`), exactly and
/// without a locale or a formatter object, so the same instant always gives the same bytes.
public enum ISO8601 {
    /// The text for an instant given in microseconds since 1970-01-01T00:00:00Z, with six
    /// fractional digits.
    public static func string(microseconds: Int64) -> String {
        let (seconds, micros) = floorDivide(microseconds, 1_000_000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let hour = secondOfDay / 3600
        let minute = secondOfDay % 3600 / 60
        let second = secondOfDay % 60
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(micros, 6))Z"
    }

    /// The year, month and day of a day counted from 1970-01-01 (proleptic Gregorian calendar).
    public static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        // Howard Hinnant's days-to-civil algorithm: eras of 400 years, years starting in March.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// The day counted from 1970-01-01 of a calendar date; nil when the date does not exist.
    public static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            (-1_000_000...1_000_000).contains(year)
        else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let quotient = a / b
        let remainder = a % b
        return remainder < 0 ? (quotient - 1, remainder + b) : (quotient, remainder)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(abs(value))
        let padded = text.count < width ? String(repeating: "0", count: width - text.count) + text : text
        return value < 0 ? "-" + padded : padded
    }
}
