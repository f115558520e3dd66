import Commands
import EventStore
import Foundation

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
            let recorded: Bool
            do {
                recorded = try item.event.id.map { try store.event(withID: $0) != nil } ?? false
            } catch let error as EventStoreError {
                // Nothing of this line on is written: resume from it once the cause is fixed.
                throw ImportFailure(error: error, line: freshLines.first ?? item.line, kind: .batch(last: pending.last?.line ?? item.line))
            }
            guard recorded else {
                // Ids were checked for repeats when the batch was gathered: this cannot refuse.
                try fresh.add(EventLine(stream: item.stream, event: item.event, expectedVersion: nil), number: item.line)
                freshLines.append(item.line)
                continue
            }
            try await appendFresh()
            do {
                count(try await store.append([StreamAppend(stream: item.stream, events: [item.event])]))
            } catch let error as EventStoreError {
                // Other content under a recorded id is this line's fault; anything else is not.
                throw ImportFailure(error: error, line: item.line, kind: error.code == .idempotencyConflict ? .line : .batch(last: item.line))
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

    /// One sentence on what was imported from the input's first `lines` lines; `atEnd` when the
    /// input ended there (a --skip past it then imported nothing, and says so).
    func summary(lines: Int, atEnd: Bool = false) -> String {
        if atEnd && skipped > 0 && lines <= skipped {
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
