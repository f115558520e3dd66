import EventStore
import Foundation

/// The synthetic workload of S1, S2 and S6: events of about 200 bytes of JSON data, spread
/// round-robin over a number of streams.
struct Workload: Sendable {
    let streams: Int

    static let type = "Happened"

    func streamName(_ index: Int) -> String { "stream-" + String(index) }

    /// About 200 bytes of JSON for the n-th event:
    /// `{"n":N,"stream":S,"kind":"reading","note":"xxx...x"}`, padded to 200 bytes.
    ///
    /// Built byte by byte: it runs inside every contender's timed loop, so it must cost little
    /// next to an append (string interpolation here once took a third of S1's time).
    func data(_ n: Int) -> Data {
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.size)
        bytes.append(contentsOf: Self.start)
        Self.appendDecimal(n, to: &bytes)
        bytes.append(contentsOf: Self.middle)
        Self.appendDecimal(n % streams, to: &bytes)
        bytes.append(contentsOf: Self.kind)
        let padding = max(0, Self.size - bytes.count - Self.end.count)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "x"), count: padding))
        bytes.append(contentsOf: Self.end)
        return Data(bytes)
    }

    private static let size = 200
    private static let start = Array(#"{"n":"#.utf8)
    private static let middle = Array(#","stream":"#.utf8)
    private static let kind = Array(#","kind":"reading","note":""#.utf8)
    private static let end = Array(#""}"#.utf8)

    private static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value.magnitude
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    /// The events numbered `range`, as parts of one append (one part per event, each to its stream).
    func appends(_ range: Range<Int>) -> [StreamAppend] {
        range.map { n in StreamAppend(stream: streamName(n % streams), events: [NewEvent(type: Self.type, data: data(n))]) }
    }
}
