import EventStore
import WireFormat

extension EventBatch {
    /// Reads every line of `reader` into one batch (blank lines skipped). Throws
    /// ``WireFormatError`` for a bad line, and ``CLIError`` with `invalidInput` for an empty batch
    /// (unless `allowingEmpty`: a processor's batch that only moves its tracking position) or
    /// one over the store's limit on events per append.
    static func read(_ reader: LineReader, allowingEmpty: Bool = false) throws -> EventBatch {
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
        if batch.eventCount == 0 && !allowingEmpty {
            throw CLIError(.invalidInput, "The batch holds no events; give one JSON event per line.")
        }
        return batch
    }
}
