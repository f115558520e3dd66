import Commands
import EventStore
import Foundation
import WireFormat

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
    /// One input line's event (its expected version dropped: import ignores them).
    private typealias Item = (line: Int, event: EventLine)

    private let store: any EventLog
    private let batchSize: Int
    /// The batch being gathered, in input order, and the ids it holds.
    private var items: [Item] = []
    private var ids = Set<UUID>()
    private var batchBytes = 0
    private(set) var imported = 0
    private(set) var alreadyRecorded = 0
    /// `$StreamDeleted` lines passed over: the copy has none of the holes they record.
    private(set) var deletionRecords = 0

    /// Passes over a line of the store's own `$deletions` stream.
    func passOverDeletionRecord() { deletionRecords += 1 }
    /// `$ForgetRequested` lines of the source passed over (a forget is done once, at its
    /// `$SubjectForgotten` line).
    private(set) var forgetRecords = 0
    func passOverForgetRecord() { forgetRecords += 1 }
    /// Subjects forgotten here at a `$SubjectForgotten` line (a key shared with the source).
    private(set) var subjectsForgotten = 0

    /// Forgets in this store the subject a source's `$SubjectForgotten` line names, once the
    /// events before the line are written: a backup restored from before a forget, given the
    /// log since (an export from its head on), forgets again; a copy whose parts came forgotten
    /// has nothing left to forget, and the forget writes nothing.
    func forget(_ line: EventLine, number: Int) async throws {
        try await flush()
        guard let value = try? JSONValue(parsing: [UInt8](line.event.data)), let subject = value["subject"]?.stringValue,
            let key = value["key"]?.stringValue
        else {
            throw CLIError(.invalidInput, "Line \(number): a $SubjectForgotten line names no subject and key.")
        }
        // Only the source's key: one this store shares with it (a restored backup); a key
        // this store made for data the source still reads stays.
        if try await store.forget(subject, onlyKey: key).keyID != nil { subjectsForgotten += 1 }
        committedThroughLine = number
    }
    /// The last input line whose event is committed (or passed over): where an interrupted
    /// import resumes (`--skip`).
    private(set) var committedThroughLine: Int
    private let started = ContinuousClock.now
    private let showsProgress = Console.errorIsTerminal
    /// A batch holds at most this much data, whatever its count.
    private static let maximumBatchBytes = 64 << 20

    /// How many lines `--skip` passed over.
    private let skipped: Int

    /// Whether events take the importer's clock rather than the time their line gives.
    private let restamps: Bool

    init(store: any EventLog, batchSize: Int, skipped: Int, restamps: Bool) {
        self.store = store
        self.batchSize = batchSize
        self.skipped = skipped
        self.restamps = restamps
        self.committedThroughLine = skipped
    }

    /// Whether the batch must be appended before `line` joins it: an id may appear once per
    /// append, and a file may carry an event twice (the store then passes the second over, or
    /// names its conflict).
    func needsFlush(before line: EventLine) -> Bool {
        line.event.id.map(ids.contains) ?? false
    }

    /// Adds an event, with the time its line gives unless restamping; returns true when the batch
    /// is full and should be flushed.
    func add(_ line: EventLine, line number: Int) -> Bool {
        var event = line.event
        if !restamps { event.recordedAtMicroseconds = line.recordedAt }
        items.append((number, EventLine(stream: line.stream, event: event, expectedVersion: nil)))
        if let id = line.event.id { ids.insert(id) }
        batchBytes += line.event.data.count + line.event.metadata.count
        return items.count >= batchSize || batchBytes >= Self.maximumBatchBytes
    }

    /// Appends the gathered events in one atomic append. When some of them are recorded already
    /// (an import run again from an earlier line), those go one by one, each idempotent on its
    /// own, and the others together; a recorded id with other content stops the import at its
    /// line, with the new events before it written. Throws ``ImportFailure``.
    func flush() async throws {
        let pending = items
        items = []
        ids = []
        batchBytes = 0
        do {
            try await appendTogether(pending)
        } catch let error as EventStoreError where error.code == .idempotencyConflict {
            try await appendApart(pending)
        } catch let error as EventStoreError {
            throw Self.failure(error, ofBatch: pending)
        }
        showProgress()
    }

    /// Appends recorded events one by one and the new ones in one append per run between them.
    private func appendApart(_ pending: [Item]) async throws {
        var fresh: [Item] = []
        func appendFresh() async throws {
            do {
                try await appendTogether(fresh)
            } catch let error as EventStoreError {
                throw Self.failure(error, ofBatch: fresh)
            }
            fresh = []
        }
        for (index, item) in pending.enumerated() {
            let recorded: Bool
            do {
                if let id = item.event.event.id {
                    recorded = try await store.event(withID: id) != nil
                } else {
                    recorded = false
                }
            } catch let error as EventStoreError {
                // Nothing from the first unwritten line on is written: resume from it.
                throw Self.failure(error, ofBatch: fresh + pending[index...])
            }
            guard recorded else {
                fresh.append(item)
                continue
            }
            try await appendFresh()
            do {
                count(try await restore([StreamAppend(stream: item.event.stream, events: [item.event.event])]))
                committedThroughLine = max(committedThroughLine, item.line)
            } catch let error as EventStoreError {
                // Other content under a recorded id is this line's fault; anything else is not.
                throw error.code == .idempotencyConflict
                    ? ImportFailure(error: error, line: item.line, kind: .line) : Self.failure(error, ofBatch: [item])
            }
        }
        try await appendFresh()
    }

    /// Appends `appends` as a copy of a log: the source's own `$` streams (an operator's
    /// `$projections` decisions) come along, as the store's own writes.
    private func restore(_ appends: [StreamAppend]) async throws -> [AppendResult] {
        try await SystemWrites.$isActive.withValue(true) { try await store.append(appends) }
    }

    /// Appends `items` in one atomic append (nothing when there are none); throws the store's
    /// error as it is.
    private func appendTogether(_ items: [Item]) async throws {
        guard !items.isEmpty else { return }
        var batch = EventBatch()
        // Ids are unique in a batch and expectations dropped: adding cannot refuse.
        for item in items { try batch.add(item.event, number: item.line) }
        count(try await restore(batch.appends))
        committedThroughLine = max(committedThroughLine, items.last?.line ?? 0)
    }

    /// The failure of a batch refused as a whole, for a cause outside its lines.
    private static func failure(_ error: EventStoreError, ofBatch items: [Item]) -> ImportFailure {
        ImportFailure(error: error, line: items.first?.line ?? 0, kind: .batch(last: items.last?.line ?? 0))
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

    /// One sentence on what was imported from the input's first `lines` lines; `atEnd` when the
    /// input ended there (a --skip past it then imported nothing, and says so).
    func summary(lines: Int, atEnd: Bool = false) -> String {
        if atEnd && skipped > 0 && lines <= skipped {
            return "Imported nothing: --skip \(skipped) passes over all \(Self.counted(lines, "line")) of the input."
        }
        var again = alreadyRecorded > 0 ? " (\(alreadyRecorded) already recorded, passed over)" : ""
        if deletionRecords > 0 { again += " (\(Self.counted(deletionRecords, "deletion record")) of the source's $deletions passed over)" }
        if forgetRecords > 0 { again += " (\(Self.counted(forgetRecords, "forget request")) of the source's $forgotten passed over)" }
        if subjectsForgotten > 0 { again += " (\(Self.counted(subjectsForgotten, "subject")) forgotten as the source did)" }
        let after = skipped > 0 ? " after skipping \(skipped)" : ""
        return "Imported \(Self.counted(imported, "event")) from \(Self.counted(lines - skipped, "line"))\(after)\(again) in \(String(format: "%.1f", seconds)) s."
    }

    private static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }
}
