import Foundation

/// Formats and parses UTC timestamps as ISO 8601 text (`2026-11-22T08:30:00.000000Z`), exactly and
/// without a locale or a formatter object, so the same instant always gives the same bytes.
package enum ISO8601 {
    /// The text for an instant given in microseconds since 1970-01-01T00:00:00Z, with six
    /// fractional digits.
    package static func string(microseconds: Int64) -> String {
        let (seconds, micros) = floorDivide(microseconds, 1_000_000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let hour = secondOfDay / 3600
        let minute = secondOfDay % 3600 / 60
        let second = secondOfDay % 60
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(micros, 6))Z"
    }

    /// Parses a UTC timestamp as ``string(microseconds:)`` writes it
    /// (`2026-11-22T08:30:00.123456Z`): a four-digit year, `T`, a time with 0 to 6 fractional
    /// digits, and `Z` or an offset (`+01:00`). Returns microseconds since
    /// 1970-01-01T00:00:00Z; nil for any other text, a date that does not exist, or a time
    /// finer than a microsecond.
    package static func microseconds(parsing text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<digits {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
                index += 1
            }
            return value
        }
        func literal(_ character: Character) -> Bool {
            guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else { return false }
            index += 1
            return true
        }
        guard let year = number(4), literal("-"), let month = number(2), literal("-"), let day = number(2),
            literal("T") || literal("t"), let hour = number(2), literal(":"), let minute = number(2), literal(":"),
            let second = number(2), hour < 24, minute < 60, second < 60,
            let days = daysSinceEpoch(year: year, month: month, day: day)
        else { return nil }
        var micros: Int64 = 0
        if literal(".") {
            var digits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                guard digits < 6 else { return nil }
                micros = micros * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<6 { micros *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if !(literal("Z") || literal("z")) {
            let sign: Int64
            if literal("+") { sign = 1 } else if literal("-") { sign = -1 } else { return nil }
            guard let offsetHours = number(2), literal(":"), let offsetMinutes = number(2), offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard index == bytes.count else { return nil }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return seconds * 1_000_000 + micros
    }

    /// The year, month and day of a day counted from 1970-01-01 (proleptic Gregorian calendar).
    /// Days beyond ±2^60 (no calendar reaches them) give the date of that bound, so any day
    /// number, however it was made, has a date and nothing traps.
    package static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let bound: Int64 = 1 << 60
        let days = Swift.min(Swift.max(days, -bound), bound)
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
    package static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64? {
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

extension Date {
    /// Microseconds since 1970; 0 for a date out of Int64's range (an injected clock may say anything).
    package var microsecondsSince1970: Int64 {
        let value = (timeIntervalSince1970 * 1_000_000).rounded()
        guard value.isFinite, value < 9.2e18, value > -9.2e18 else { return 0 }
        return Int64(value)
    }
}
