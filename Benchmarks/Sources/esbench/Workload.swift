import EventStore
import Foundation

/// The synthetic workload of S1, S2 and S6: events of about 200 bytes of JSON data, spread
/// round-robin over a number of streams.
struct Workload: Sendable {
    let streams: Int

    static let type = "Happened"

    func streamName(_ index: Int) -> String { "stream-" + String(index) }

    /// About 200 bytes of JSON for the n-th event.
    func data(_ n: Int) -> Data {
        let prefix = "{\"n\":\(n),\"stream\":\(n % streams),\"kind\":\"reading\",\"note\":\""
        let suffix = "\"}"
        let padding = max(0, 200 - prefix.utf8.count - suffix.utf8.count)
        return Data((prefix + String(repeating: "x", count: padding) + suffix).utf8)
    }

    /// The events numbered `range`, as parts of one append (one part per event, each to its stream).
    func appends(_ range: Range<Int>) -> [StreamAppend] {
        range.map { n in StreamAppend(stream: streamName(n % streams), events: [NewEvent(type: Self.type, data: data(n))]) }
    }
}
