import EventStore
import WireFormat

extension EventBatch {
    /// Reads every line of `reader` into one batch (blank lines skipped), as
    /// ``EventBatch/read(allowingEmpty:advice:nextLine:)`` of WireFormat does (the server's
    /// `POST /append` reads the same way). Throws ``WireFormatError`` for a bad line, an empty
    /// batch (unless `allowingEmpty`: a processor's batch that only moves its tracking position)
    /// or one over the store's limit on events per append; ``CLIError`` when reading fails.
    static func read(_ reader: LineReader, allowingEmpty: Bool = false) throws -> EventBatch {
        try read(allowingEmpty: allowingEmpty, advice: "split it, or load it with `esctl import`") {
            try reader.nextLine().map { (line: $0, number: reader.lineNumber) }
        }
    }
}
