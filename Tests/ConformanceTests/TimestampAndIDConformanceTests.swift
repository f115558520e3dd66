import EventStore
import Foundation
import Testing

// No store: the instants every backend records and the ids it generates by default, checked once
// (they run without a backend).
@Suite("ISO 8601 text and time-ordered ids")
struct TimestampAndIDConformanceTests {
    @Test("instants format exactly, including leap days and times before 1970", arguments: [
        (Int64(0), "1970-01-01T00:00:00.000000Z"),
        (Int64(1_767_225_600_000_000), "2026-01-01T00:00:00.000000Z"),
        (Int64(951_782_400_123_456), "2000-02-29T00:00:00.123456Z"),
        (Int64(-1), "1969-12-31T23:59:59.999999Z"),
        (Int64(4_102_444_799_999_999), "2099-12-31T23:59:59.999999Z"),
    ])
    func formats(_ micros: Int64, _ text: String) {
        #expect(ISO8601.string(microseconds: micros) == text)
    }

    @Test("calendar dates convert to days and back, and impossible dates are refused")
    func civilDates() {
        for days in stride(from: Int64(-800_000), through: 800_000, by: 997) {
            let (y, m, d) = ISO8601.civilDate(daysSinceEpoch: days)
            #expect(ISO8601.daysSinceEpoch(year: y, month: m, day: d) == days)
        }
        #expect(ISO8601.daysSinceEpoch(year: 2023, month: 2, day: 29) == nil)
        #expect(ISO8601.daysSinceEpoch(year: 2024, month: 2, day: 29) != nil)
        #expect(ISO8601.daysSinceEpoch(year: 2024, month: 13, day: 1) == nil)
        #expect(ISO8601.daysSinceEpoch(year: 2024, month: 4, day: 31) == nil)
    }

    @Test("version 7 ids carry their millisecond, the version and variant bits, and increase")
    func uuidV7() {
        let instant = Date(timeIntervalSince1970: 1_767_225_600.5)
        let generator = UUIDv7Generator(clock: { instant })
        let ids = (0..<5000).map { _ in generator.next() }
        for id in ids {
            let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 7)
            #expect(bytes[8] >> 6 == 0b10)
        }
        let first = withUnsafeBytes(of: ids[0].uuid) { Array($0) }
        let millis = first[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(millis == 1_767_225_600_500)
        let ordered = ids.map { withUnsafeBytes(of: $0.uuid) { Array($0) } }
        #expect(zip(ordered, ordered.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) })
        #expect(Set(ids).count == ids.count)
        // And their random bits differ, across the batches the generator takes them in.
        #expect(Set(ordered.map { Array($0[8...]) }).count == ids.count, "the random tails repeat")
    }
}
