import ArgumentParser
import Commands
import EventStore
import Foundation
import Projections
import WireFormat

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import NDJSON events, one per line, in large atomic batches.",
        discussion: """
            Each line is {"stream":S,"type":T,"data":JSON,"id":UUID?,"metadata":JSON?,"recordedAt":TIME?,"tags":[T,...]?} \
            (the format export writes; other keys, expectedVersion among them, are ignored). Events \
            keep the recordedAt their line gives (ISO 8601, as export writes it); lines without one, \
            and every line with --restamp, take the importer's clock. Events are appended in input \
            order, in atomic batches of up to --batch-size events. Lines whose ids are already \
            recorded with the same content are passed over, so an import can be run again. A line \
            that is not a valid event, or whose id is recorded with other content, stops the \
            import: everything before it is kept and reported, and the message says which --skip \
            resumes after fixing it. Shows progress with the rate on a terminal. --json prints \
            {"imported","alreadyRecorded","lines","headPosition"} on standard output, also when the \
            import stops (then "lines" counts the lines before the one that stopped it). Lines of \
            the stream $deletions (a source's records of its own deletions) are passed over and \
            counted as "deletionRecordsPassedOver": the copy has no holes. Lines with "personal" \
            marks are sealed again under this store's keys (parts marked forgotten stay forgotten). A \
            $SubjectForgotten line forgets its subject here too when this store holds the very key \
            it names, once the lines before it are written ("subjectsForgotten"): a backup restored \
            from before a forget, given the export of the log since, forgets again, while keys this \
            store made itself stay; $ForgetRequested lines are passed over ("forgetRecordsPassedOver").
            """)

    @OptionGroup var store: WritingStoreOptions

    @Argument(help: ArgumentHelp("The NDJSON file, or - for standard input.", valueName: "FILE|-"))
    var file: String

    @Option(help: ArgumentHelp("Skip the first N lines (to resume an import).", valueName: "N"), transform: Numbers.whole("--skip", 0...Int.max))
    var skip: Int = 0

    @Option(
        name: .customLong("batch-size"), help: ArgumentHelp("Events per atomic batch (1 to 10000).", valueName: "N"),
        transform: Numbers.whole("--batch-size", 1...Limits.maximumEventsPerAppend))
    var batchSize: Int = Limits.maximumEventsPerAppend

    @Flag(help: "Give every event the importer's clock as its recorded time, not the time its line gives.")
    var restamp = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let reader = try LineReader(path: file)
            // As stored: the events already there are compared with the lines as they were written.
            let store = try await self.store.open(asStored: true)
            return try await store.closingAfter {
                let importer = Importer(store: store, batchSize: batchSize, skipped: skip, restamps: restamp)
                while reader.lineNumber < skip, try reader.nextLine() != nil {}
                let signals = Interrupts.onSignals()
                defer { signals.cancel() }
                do {
                    try await importLines(from: reader, with: importer)
                } catch let failure as ImportStop {
                    // A script learns how far the import got from the summary, the reason from stderr.
                    if json { try await printSummary(importer, lines: failure.linesBefore, store: store) }
                    throw failure.error
                }
                importer.finishProgress()
                if json {
                    try await printSummary(importer, lines: reader.lineNumber, store: store)
                } else {
                    Console.print(importer.summary(lines: reader.lineNumber, atEnd: true))
                }
            }
        }
    }

    /// Why an import stopped, and how many input lines came before the one that stopped it.
    private struct ImportStop: Error {
        let error: CLIError
        let linesBefore: Int
    }

    private func importLines(from reader: LineReader, with importer: Importer) async throws {
        do {
            while let line = try reader.nextLine() {
                try stopIfInterrupted(importer)
                if EventLine.isBlank(line) { continue }
                let parsed: EventLine
                do {
                    parsed = try EventLine(line, number: reader.lineNumber)
                } catch {
                    try await importer.flush()
                    importer.finishProgress()
                    let before = reader.lineNumber - 1
                    throw ImportStop(
                        error: CLIError(
                            .invalidInput,
                            "\(error.message.replacingOccurrences(of: "; nothing was written.", with: ".")) \(importer.summary(lines: before)) Fix the line and resume with --skip \(before)."),
                        linesBefore: before)
                }
                // The source's own records of its deletions describe holes the copy does not have.
                if parsed.stream == StreamDeletion.systemStream {
                    importer.passOverDeletionRecord()
                    continue
                }
                // Its records of forgets: each forget is done here too, at its end.
                if parsed.stream == "$forgotten" {
                    if parsed.event.type == "$SubjectForgotten" {
                        try await importer.forget(parsed, number: reader.lineNumber)
                    } else {
                        importer.passOverForgetRecord()
                    }
                    continue
                }
                // Synchronous unless a flush is due: an await per line would hop between
                // executors for every event.
                if importer.needsFlush(before: parsed) { try await importer.flush() }
                if importer.add(parsed, line: reader.lineNumber) { try await importer.flush() }
            }
            try stopIfInterrupted(importer)
            try await importer.flush()
        } catch let failure as ImportFailure {
            importer.finishProgress()
            let before = failure.line - 1
            switch failure.kind {
            case .line:
                throw ImportStop(
                    error: CLIError(
                        ExitStatus(failure.error.category),
                        "Line \(failure.line): \(failure.error.message) \(importer.summary(lines: before)) Fix the line and resume with --skip \(before)."),
                    linesBefore: before)
            case .batch(let last):
                throw ImportStop(
                    error: CLIError(
                        ExitStatus(failure.error.category),
                        "\(failure.error.message) \(importer.summary(lines: before)) Lines \(failure.line) to \(last) (one batch) were not written: resume with --skip \(before) once the cause is fixed."),
                    linesBefore: before)
            }
        }
    }

    /// After SIGINT or SIGTERM: stops before the next batch (the one in flight has committed or
    /// failed whole; what was gathered for the next is not written), to resume after the last commit.
    private func stopIfInterrupted(_ importer: Importer) throws {
        guard Interrupts.received != nil else { return }
        importer.finishProgress()
        let resume = importer.committedThroughLine
        throw ImportStop(
            error: CLIError(Interrupts.exitStatus, "Interrupted. \(importer.summary(lines: resume)) Resume with --skip \(resume)."),
            linesBefore: resume)
    }

    private func printSummary(_ importer: Importer, lines: Int, store: any EventLog) async throws {
        var object = JSONObjectWriter()
        object.add("imported", importer.imported)
        object.add("alreadyRecorded", importer.alreadyRecorded)
        object.add("lines", lines)
        if importer.deletionRecords > 0 { object.add("deletionRecordsPassedOver", importer.deletionRecords) }
        if importer.forgetRecords > 0 { object.add("forgetRecordsPassedOver", importer.forgetRecords) }
        if importer.subjectsForgotten > 0 { object.add("subjectsForgotten", importer.subjectsForgotten) }
        await object.add("headPosition", try store.headPosition())
        Console.printJSON(object.finish())
    }
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the log as NDJSON (the format import reads) to standard output.",
        discussion: """
            One object per line, as replay --json --as-stored writes it (events as stored, never \
            upcast): position, stream, version, id, type, data, metadata, recordedAt, and \
            schemaVersion when it is not 1, and personal when some data is personal to a subject: \
            personal data is written decrypted (the copy seals it under its own keys), a forgotten \
            subject's as {"$forgotten":"SUBJECT"} with its part marked "forgotten":true, so no key \
            leaves the store, and tags when the event has any. Importing the whole log's export into an empty store gives \
            the same log (positions, streams, versions, ids, data, metadata, tags and recorded times), \
            so exporting that store again gives the same bytes, unless the log has deletions: the \
            copy leaves out the $deletions (and $forgotten) records and has no holes, so positions (and the \
            versions of streams trimmed or recreated) after the first hole differ. Only the log travels: projections \
            are rebuilt on the other side. Reads the store read-only.
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("The first position to export.", valueName: "P"), transform: Numbers.unsigned("--from"))
    var from: UInt64 = 1

    @Option(help: ArgumentHelp("The last position to export (default: the head).", valueName: "P"), transform: Numbers.unsigned("--to"))
    var to: UInt64?

    func validate() throws {
        if let to, to < from { throw ValidationError("--to \(to) is before --from \(from); give a range whose end is not before its start.") }
    }

    @OptionGroup var filters: FilterOptions

    func run() async throws {
        try await reportingErrors {
            // As stored: a copy carries every event's history (its type, shape and schema version) unchanged.
            let store = try await self.store.openReadOnly(asStored: true)
            return try await store.closingAfter {
                // A page at a time, through the head as it is now: one consistent end, little memory.
                for try await event in store.events(from: from, through: to ?? .max, filter: filters.filter(), pageSize: 1000) {
                    Console.printJSON(EventLines.json(event))
                }
            }
        }
    }
}
