import EventStore

/// NDJSON event lines gathered into one atomic append: the events of each stream together,
/// streams in the order they first appear, and for every input line where its event went.
struct EventBatch {
    private(set) var appends: [StreamAppend] = []
    /// For each event in input order: which append and which event of it.
    private(set) var placements: [(append: Int, event: Int)] = []
    private var appendOfStream: [String: Int] = [:]

    var eventCount: Int { placements.count }

    /// Adds one parsed line. An expected version is only allowed on a stream's first line.
    mutating func add(_ line: EventLine, number: Int) throws {
        if let index = appendOfStream[line.stream] {
            if line.expectedVersion != nil {
                throw CLIError(
                    .invalidInput,
                    "Line \(number) gives an expectedVersion, but only the first line of stream '\(line.stream)' may; nothing was written.")
            }
            appends[index].events.append(line.event)
            placements.append((index, appends[index].events.count - 1))
        } else {
            appendOfStream[line.stream] = appends.count
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
