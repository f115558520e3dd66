import EventStoreCore
import Foundation

/// NDJSON event lines gathered into one atomic append that keeps their order: consecutive lines
/// of one stream form one part, and a stream may come back in a later part.
public struct EventBatch: Sendable {
    /// The batch as one atomic append.
    public private(set) var appends: [StreamAppend] = []
    /// For each event in input order: which append and which event of it.
    public private(set) var placements: [(append: Int, event: Int)] = []
    private var streams = Set<String>()
    /// The line of each event id given so far.
    private var idLines: [UUID: Int] = [:]

    /// How many events the batch holds.
    public var eventCount: Int { placements.count }

    public init() {}

    /// Adds one parsed line. An expected version is only allowed on a stream's first line; an id
    /// only once. Throws ``WireFormatError`` with ``WireFormatError/Code/invalidBatch``.
    public mutating func add(_ line: EventLine, number: Int) throws(WireFormatError) {
        if let id = line.event.id, let first = idLines[id] {
            throw WireFormatError(
                .invalidBatch, "Line \(number) repeats the id \(id.lowercasedString) of line \(first): give each event its own id; nothing was written.",
                line: number)
        }
        if streams.contains(line.stream) && line.expectedVersion != nil {
            throw WireFormatError(
                .invalidBatch,
                "Line \(number) gives an expectedVersion, but only the first line of stream '\(line.stream)' may; nothing was written.",
                line: number)
        }
        streams.insert(line.stream)
        if let id = line.event.id { idLines[id] = number }
        if let last = appends.indices.last, appends[last].stream == line.stream {
            appends[last].events.append(line.event)
            placements.append((last, appends[last].events.count - 1))
        } else {
            appends.append(StreamAppend(stream: line.stream, events: [line.event], expectedVersion: line.expectedVersion ?? .any))
            placements.append((appends.count - 1, 0))
        }
    }
}
