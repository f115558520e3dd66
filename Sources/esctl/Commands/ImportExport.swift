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
                    if try importer.add(parsed, line: reader.lineNumber) { try await importer.flush() }
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
                Console.print(importer.summary(lines: reader.lineNumber))
            }
        }
    }
}

/// Why an import stopped at a line: the store refused that line's event, or a whole batch
/// (from `line` to `last`) for a cause outside the input (a full disk, a damaged store).
struct ImportFailure: Error {
    enum Kind {
        case line
        case batch(last: Int)
    }
    let error: EventStoreError
    let line: Int
    let kind: Kind
}

/// Gathers events into batches that keep their order, appends them, and counts.
final class Importer {
    private let store: EventStore
    private let batchSize: Int
    private var batch = EventBatch()
    /// The events of `batch` in input order, with their line numbers.
    private var items: [(line: Int, stream: String, event: NewEvent)] = []
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

    /// Whether the batch must be appended before `line` joins it: an id may appear once per
    /// append, and a file may carry an event twice (the store then passes the second over, or
    /// names its conflict).
    func needsFlush(before line: EventLine) -> Bool {
        line.event.id.map(batch.contains(id:)) ?? false
    }

    /// Adds an event (its expected version dropped); returns true when the batch is full and
    /// should be flushed.
    func add(_ line: EventLine, line number: Int) throws -> Bool {
        try batch.add(EventLine(stream: line.stream, event: line.event, expectedVersion: nil), number: number)
        items.append((number, line.stream, line.event))
        batchBytes += line.event.data.count + line.event.metadata.count
        return batch.eventCount >= batchSize || batchBytes >= Self.maximumBatchBytes
    }

    /// Appends the gathered events in one atomic append. When some of them are recorded already
    /// (an import run again from an earlier line), those go one by one, each idempotent on its
    /// own, and the others together; a recorded id with other content stops the import at its
    /// line, with the new events before it written. Throws ``ImportFailure``.
    func flush() async throws {
        guard let first = items.first, let last = items.last else { return }
        let appends = batch.appends
        let pending = items
        batch = EventBatch()
        items = []
        batchBytes = 0
        do {
            count(try await store.append(appends))
        } catch let error as EventStoreError where error.code == .idempotencyConflict {
            try await appendApart(pending)
        } catch let error as EventStoreError {
            throw ImportFailure(error: error, line: first.line, kind: .batch(last: last.line))
        }
        showProgress()
    }

    /// Appends recorded events one by one and the new ones in one append per run between them.
    private func appendApart(_ pending: [(line: Int, stream: String, event: NewEvent)]) async throws {
        var fresh = EventBatch()
        var freshLines: [Int] = []
        func appendFresh() async throws {
            guard let first = freshLines.first, let last = freshLines.last else { return }
            do {
                count(try await store.append(fresh.appends))
            } catch let error as EventStoreError {
                throw ImportFailure(error: error, line: first, kind: .batch(last: last))
            }
            fresh = EventBatch()
            freshLines = []
        }
        for item in pending {
            guard let id = item.event.id, try store.event(withID: id) != nil else {
                try fresh.add(EventLine(stream: item.stream, event: item.event, expectedVersion: nil), number: item.line)
                freshLines.append(item.line)
                continue
            }
            try await appendFresh()
            do {
                count(try await store.append([StreamAppend(stream: item.stream, events: [item.event])]))
            } catch let error as EventStoreError {
                throw ImportFailure(error: error, line: item.line, kind: .line)
            }
        }
        try await appendFresh()
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
