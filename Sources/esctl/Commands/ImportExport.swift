import ArgumentParser
import Commands
import EventStore
import Foundation
import Projections

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import NDJSON events, one per line, in large atomic batches.",
        discussion: """
            Each line is {"stream":S,"type":T,"data":JSON,"id":UUID?,"metadata":JSON?} (the format \
            export writes; other keys, expectedVersion among them, are ignored). Events are \
            appended in input order, in atomic batches of up to --batch-size events. Lines whose \
            ids are already recorded with the same content are passed over, so an import can be \
            run again. A line that is not a valid event, or whose id is recorded with other \
            content, stops the import: everything before it is kept and reported, and the \
            message says which --skip resumes after fixing it. Shows progress with the rate on a \
            terminal. --json prints {"imported","alreadyRecorded","lines","headPosition"}.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: ArgumentHelp("The NDJSON file, or - for standard input.", valueName: "FILE|-"))
    var file: String

    @Option(help: ArgumentHelp("Skip the first N lines (to resume an import).", valueName: "N"))
    var skip: Int = 0

    @Option(name: .customLong("batch-size"), help: ArgumentHelp("Events per atomic batch (1 to 10000).", valueName: "N"))
    var batchSize: Int = Limits.maximumEventsPerAppend

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func validate() throws {
        guard skip >= 0 else { throw ValidationError("--skip must be 0 or more.") }
        guard (1...Limits.maximumEventsPerAppend).contains(batchSize) else {
            throw ValidationError("--batch-size must be between 1 and \(Limits.maximumEventsPerAppend).")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let reader = try LineReader(path: file)
            let store = try self.store.open()
            defer { store.close() }
            let importer = Importer(store: store, batchSize: batchSize, skipped: skip)
            while reader.lineNumber < skip, try reader.nextLine() != nil {}
            do {
                while let line = try reader.nextLine() {
                    if EventLine.isBlank(line) { continue }
                    let parsed: EventLine
                    do {
                        parsed = try EventLine(line, number: reader.lineNumber)
                    } catch let error as CommandError {
                        try await importer.flush()
                        importer.finishProgress()
                        let before = reader.lineNumber - 1
                        throw CLIError(
                            ExitStatus(error.code),
                            "\(error.message.replacingOccurrences(of: "; nothing was written.", with: ".")) \(importer.summary(lines: before)) Fix the line and resume with --skip \(before).")
                    }
                    // Synchronous unless a flush is due: an await per line would hop between
                    // executors for every event.
                    if importer.needsFlush(before: parsed) { try await importer.flush() }
                    if importer.add(parsed, line: reader.lineNumber) { try await importer.flush() }
                }
                try await importer.flush()
            } catch let failure as ImportFailure {
                importer.finishProgress()
                let before = failure.line - 1
                switch failure.kind {
                case .line:
                    throw CLIError(
                        ExitStatus(failure.error.code),
                        "Line \(failure.line): \(failure.error.message) \(importer.summary(lines: before)) Fix the line and resume with --skip \(before).")
                case .batch(let last):
                    throw CLIError(
                        ExitStatus(failure.error.code),
                        "\(failure.error.message) \(importer.summary(lines: before)) Lines \(failure.line) to \(last) (one batch) were not written: resume with --skip \(before) once the cause is fixed.")
                }
            }
            importer.finishProgress()
            if json {
                var object = JSONObjectWriter()
                object.add("imported", importer.imported)
                object.add("alreadyRecorded", importer.alreadyRecorded)
                object.add("lines", reader.lineNumber)
                object.add("headPosition", try store.headPosition())
                Console.print(object.finish())
            } else {
                Console.print(importer.summary(lines: reader.lineNumber, atEnd: true))
            }
        }
    }
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the log as NDJSON (the format import reads) to standard output.",
        discussion: """
            One object per line, as replay --json writes it: position, stream, version, id, type, \
            data, metadata, recordedAt. Importing the output into a new store gives the same \
            streams, versions, ids, data and metadata (the recorded times are the importer's).
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("The first position to export.", valueName: "P"))
    var from: UInt64 = 1

    @Option(help: ArgumentHelp("The last position to export (default: the head).", valueName: "P"))
    var to: UInt64?

    @OptionGroup var filters: FilterOptions

    func run() async throws {
        try await reportingErrors {
            let store = try self.store.openExisting()
            defer { store.close() }
            try EventPages.forEach(in: store, from: from, through: to ?? .max, limit: .max, filter: filters.filter()) {
                Console.print(EventLines.json($0))
            }
        }
    }
}
