import EventStoreCore

extension EventBatch {
    /// Reads NDJSON lines, as `nextLine` hands them with their numbers, into one batch (blank
    /// lines skipped): what `esctl append --batch` and the server's `POST /append` share.
    /// `advice` finishes the sentence for a batch over the store's limit (`split it`, and how).
    ///
    /// Throws ``WireFormatError`` for a bad line (``WireFormatError/Code/invalidLine``), and with
    /// ``WireFormatError/Code/invalidBatch`` for a batch over the store's limit on events per
    /// append or an empty one (unless `allowingEmpty`: a processor's batch that only moves its
    /// tracking position); rethrows what `nextLine` throws.
    public static func read(
        allowingEmpty: Bool = false, advice: String = "split it",
        nextLine: () throws -> (line: ArraySlice<UInt8>, number: Int)?
    ) throws -> EventBatch {
        var batch = EventBatch()
        while let next = try nextLine() {
            let (line, number) = next
            if EventLine.isBlank(line) { continue }
            if batch.eventCount == Limits.maximumEventsPerAppend {
                throw WireFormatError(
                    .invalidBatch, "The batch has more than \(Limits.maximumEventsPerAppend) events (line \(number)); \(advice). Nothing was written.",
                    line: number)
            }
            try batch.add(EventLine(line, number: number), number: number)
        }
        if batch.eventCount == 0 && !allowingEmpty {
            throw WireFormatError(.invalidBatch, "The batch holds no events; give one JSON event per line.")
        }
        return batch
    }

    /// The batch of NDJSON `bytes` held in memory (the body of `POST /append`); errors as
    /// ``read(allowingEmpty:advice:nextLine:)``.
    public static func read(ndjson bytes: [UInt8], allowingEmpty: Bool = false) throws(WireFormatError) -> EventBatch {
        var lines = NDJSONLines(bytes).makeIterator()
        do {
            return try read(allowingEmpty: allowingEmpty) { lines.next() }
        } catch let error as WireFormatError {
            throw error
        } catch {
            // `lines.next()` throws nothing; only the batch's own errors come here.
            throw WireFormatError(.invalidBatch, "The batch could not be read (\(error)); nothing was written.")
        }
    }
}
