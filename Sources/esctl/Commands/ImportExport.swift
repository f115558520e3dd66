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
            run again. A malformed line stops the import: everything before it is kept and \
            reported, and the message says which --skip resumes after fixing it. Shows progress \
            with the rate on a terminal.
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
                    // Synchronous: an await per line would hop between executors for every event.
                    if try importer.add(parsed) { try await importer.flush() }
                }
                try await importer.flush()
            } catch let error as EventStoreError {
                importer.finishProgress()
                throw CLIError(ExitStatus(error.code), "\(error.message) \(importer.summary(lines: reader.lineNumber)) The failed batch was not written.")
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
                Console.print(importer.summary(lines: reader.lineNumber))
            }
        }
    }
}

/// Gathers events into batches that keep their order, appends them, and counts.
final class Importer {
    private let store: EventStore
    private let batchSize: Int
    private var batch = EventBatch()
    private var batchBytes = 0
    private(set) var imported = 0
    private(set) var alreadyRecorded = 0
    private let started = ContinuousClock.now
    private let showsProgress = Console.errorIsTerminal
    /// A batch holds at most this much data, whatever its count.
    private static let maximumBatchBytes = 64 << 20

    /// How many lines `--skip` passed over.
    private let skipped: Int

    init(store: EventStore, batchSize: Int, skipped: Int) {
        self.store = store
        self.batchSize = batchSize
        self.skipped = skipped
    }

    /// Adds an event to the batch; returns true when the batch is full and should be flushed.
    func add(_ line: EventLine) throws -> Bool {
        let stripped = EventLine(stream: line.stream, event: line.event, expectedVersion: nil)
        try batch.add(stripped, number: 0)
        batchBytes += line.event.data.count + line.event.metadata.count
        return batch.eventCount >= batchSize || batchBytes >= Self.maximumBatchBytes
    }

    /// Appends the gathered events. When some of them are recorded already (an import run
    /// again from another line), the batch goes event by event, each idempotent on its own.
    func flush() async throws {
        guard batch.eventCount > 0 else { return }
        let appends = batch.appends
        batch = EventBatch()
        batchBytes = 0
        do {
            count(try await store.append(appends))
        } catch let error as EventStoreError where error.code == .idempotencyConflict {
            for append in appends {
                for event in append.events {
                    count(try await store.append([StreamAppend(stream: append.stream, events: [event])]))
                }
            }
        }
        showProgress()
    }

    private func count(_ results: [AppendResult]) {
        for result in results {
            if result.alreadyRecorded { alreadyRecorded += result.positions.count } else { imported += result.positions.count }
        }
    }

    private var seconds: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private func showProgress() {
        guard showsProgress else { return }
        let rate = seconds > 0 ? Int(Double(imported + alreadyRecorded) / seconds) : 0
        Console.note("\r\u{1B}[Kimported \(imported) events (\(rate) events/s)")
    }

    func finishProgress() {
        if showsProgress { Console.note("\r\u{1B}[K") }
    }

    /// One sentence on what was imported from the input's first `lines` lines.
    func summary(lines: Int) -> String {
        if skipped > 0 && lines <= skipped {
            return "Imported nothing: --skip \(skipped) passes over all \(Self.counted(lines, "line")) of the input."
        }
        let again = alreadyRecorded > 0 ? " (\(alreadyRecorded) already recorded, passed over)" : ""
        let after = skipped > 0 ? " after skipping \(skipped)" : ""
        return "Imported \(Self.counted(imported, "event")) from \(Self.counted(lines - skipped, "line"))\(after)\(again) in \(String(format: "%.1f", seconds)) s."
    }

    private static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
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

    @Option(help: ArgumentHelp("The first position to export (default 1).", valueName: "P"))
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
