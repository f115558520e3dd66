import EventStore
import Testing

/// The text form of expected versions: one parser for esctl's option, batch lines and HTTP's
/// Expected-Version header.
@Suite("Expected versions as text")
struct ExpectedVersionTextTests {
    @Test("every expected version reads back from its text")
    func roundTrip() {
        let all: [ExpectedVersion] = [.any, .noStream, .streamExists, .exact(0), .exact(7), .exact(UInt64.max)]
        #expect(all.map(\.text) == ["any", "no-stream", "exists", "0", "7", "18446744073709551615"])
        for expected in all {
            #expect(ExpectedVersion(text: expected.text) == expected, "\(expected.text)")
        }
        #expect(ExpectedVersion(text: "007") == .exact(7))
    }

    @Test("a sign, spaces, other words, fractions and numbers past 2^64 - 1 are refused, with one sentence")
    func refusals() {
        for text in ["+5", "-1", " 5", "5 ", "", "1.0", "1e3", "0x5", "Any", "ANY", "nostream", "18446744073709551616", "99999999999999999999999", "\u{0665}"] {
            #expect(ExpectedVersion(text: text) == nil, "'\(text)'")
        }
        #expect(
            ExpectedVersion.refusal(of: "+5", as: "--expected-version")
                == "--expected-version takes any, no-stream, exists or a version number of 0 or more; '+5' is not one.")
    }
}
