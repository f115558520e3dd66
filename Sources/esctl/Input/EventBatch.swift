import Commands
import EventStore
import Foundation

/// NDJSON event lines gathered into one atomic append that keeps their order: consecutive lines
/// of one stream form one part, and a stream may come back in a later part.
struct EventBatch {
    private(set) var appends: [StreamAppend] = []
    /// For each event in input order: which append and which event of it.
    private(set) var placements: [(append: Int, event: Int)] = []
    private var streams = Set<String>()
    /// The line of each event id given so far.
    private var idLines: [UUID: Int] = [:]

    var eventCount: Int { placements.count }

    /// Adds one parsed line. An expected version is only allowed on a stream's first line.
    mutating func add(_ line: EventLine, number: Int) throws {
        if let id = line.event.id, let first = idLines[id] {
            throw CLIError(
                .invalidInput, "Line \(number) repeats the id \(id.lowercasedString) of line \(first): give each event its own id; nothing was written.")
        }
        if streams.contains(line.stream) && line.expectedVersion != nil {
            throw CLIError(
                .invalidInput,
                "Line \(number) gives an expectedVersion, but only the first line of stream '\(line.stream)' may; nothing was written.")
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

    /// Reads every line of `reader` into a batch, stopping with an error at the first malformed
    /// line or past the append limit.
    static func read(_ reader: LineReader) throws -> EventBatch {
        var batch = EventBatch()
        while let line = try reader.nextLine() {
            if EventLine.isBlank(line) { continue }
            if batch.eventCount == Limits.maximumEventsPerAppend {
                throw CLIError(
                    .invalidInput,
                    "The batch has more than \(Limits.maximumEventsPerAppend) events (line \(reader.lineNumber)); split it, or load it with `esctl import`. Nothing was written.")
            }
            try batch.add(EventLine(line, number: reader.lineNumber), number: reader.lineNumber)
        }
        if batch.eventCount == 0 {
            throw CLIError(.invalidInput, "The batch holds no events; give one JSON event per line.")
        }
        return batch
    }
}
