import EventStoreCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Appends made again after a failover: an append whose connection failed after it was sent has
/// an unknown outcome (its commit may have been made). With one server, it fails so, with
/// ``EventStoreError/Code/outcomeUnknown``. On a URL naming several servers, the
/// same call (the same ids and times, every id looked up: ``AppendCall/retried()``) is made again
/// on the server the pool finds, so that a committed first try is answered as recorded, or as
/// written, and never written twice. Grouped appends, conditional appends and appends that also
/// write tables all go through here.
enum AppendRetry {
    /// How many times an append is made again before its caller learns the outcome is unknown.
    static let retries = 3

    /// Runs `attempt` with `first`, and after a failure a failover explains runs it again with
    /// `first.retried()` (``retries`` times at most; each waits for the pool's look at the
    /// servers). Throws the attempt's own errors at once, and
    /// ``EventStoreError/Code/outcomeUnknown`` when the retries ran out or `isClosing` says the
    /// handle closes (a closing handle does not wait for another look at the servers).
    static func run<R>(
        _ first: AppendCall, on pool: PoolSwitch, logger: Logger, isClosing: () -> Bool,
        _ attempt: (AppendCall) async throws -> R
    ) async throws -> R {
        var retries = 0
        var call = first
        while true {
            do {
                let result = try await attempt(call)
                if pool.losingAnswers.take() { throw LosingAnswers.Lost() }
                return result
            } catch {
                guard pool.survives(error) else {
                    // One server: nothing to find, so not made again; but an append whose
                    // connection failed under it may have committed.
                    guard PoolSwitch.lostUnderCall(error) else { throw error }
                    throw outcomeUnknown("the connection to PostgreSQL failed after the append was sent (with one server in the URL, the store does not make it again)", error)
                }
                guard retries < Self.retries, !isClosing() else {
                    throw outcomeUnknown(
                        "the connection to PostgreSQL failed after the append was sent, and \(retries) retries by its event ids failed too", error)
                }
                retries += 1
                call = first.retried()
                logger.notice(
                    "an append's outcome is unknown after a failure a failover explains; making it again, with the same event ids",
                    metadata: ["retry": "\(retries)", "reason": "\(error)"])
            }
        }
    }

    /// The error of an append whose outcome could not be learned (`why`), with the last failure's reason.
    static func outcomeUnknown(_ why: String, _ error: any Error) -> EventStoreError {
        let mapped = Appender.mapped(error)
        return EventStoreError(
            .outcomeUnknown,
            "The append's outcome is unknown: \(why) (\(mapped.message)); append the same events again, with the same ids, to learn whether they were recorded.",
            cause: mapped.cause)
    }
}

extension AppendCall {
    /// On a retried call, each job refused as already processed whose events are all recorded,
    /// each with this call's checksum, is answered as that append's: the try whose answer was
    /// lost recorded them with its tracking position (the append function checks tracking before
    /// it looks ids up). The checksum covers the content and the time this call gave every event,
    /// so events of the same ids that another append wrote do not pass. Other outcomes are
    /// returned as they are. `rows` runs a query (on the pool, or in the
    /// transaction of the append); when it fails, the job's outcome is unknown.
    func settlingLostTries(
        _ outcomes: [Result<[AppendResult], EventStoreError>], rows: (PostgresQuery) async throws -> [PostgresRow]
    ) async -> [Result<[AppendResult], EventStoreError>] {
        guard isRetry else { return outcomes }
        var settled = outcomes
        for (index, outcome) in outcomes.enumerated() {
            guard case let .failure(error) = outcome, error.code == .alreadyProcessed, batch.indices.contains(index) else { continue }
            let job = batch[index]
            let ids = job.ids.flatMap { $0 }
            let checksums = Dictionary(zip(arguments.eventIDs, arguments.eventChecksums).map { ($0, $1) }, uniquingKeysWith: { first, _ in first })
            do {
                let found = try await rows(
                    "SELECT id, stream, position, version, recorded_at, checksum FROM eventstore.events WHERE id = ANY(\(ids))")
                let recorded = try found.map { try $0.decode((UUID, String, Int64, Int64, Int64, Int32).self) }
                    .filter { row in checksums[row.0] == row.5 }
                    .map { ($0.0, $0.1, $0.2, $0.3, $0.4) }
                if let results = Self.results(of: job, from: recorded) {
                    settled[index] = .success(results)
                }
            } catch {
                settled[index] = .failure(
                    AppendRetry.outcomeUnknown("made again after a failover, it was refused as already processed, and looking its ids up failed", error))
            }
        }
        return settled
    }

    /// The job's results from its recorded events (id, stream, position, version, recorded_at),
    /// or nil when one is missing or in another stream. Answered as ``outcomes(_:)`` answers a
    /// retried job: as written when every id was the store's, otherwise as recorded.
    private static func results(of job: AppendRequest, from rows: [(UUID, String, Int64, Int64, Int64)]) -> [AppendResult]? {
        let byID = Dictionary(rows.map { ($0.0, $0) }, uniquingKeysWith: { first, _ in first })
        let storeIDs = job.appends.allSatisfy { $0.events.allSatisfy { $0.id == nil } }
        var results: [AppendResult] = []
        for (part, append) in job.appends.enumerated() {
            guard job.ids.indices.contains(part) else { return nil }
            var positions: [UInt64] = []
            var last: (UUID, String, Int64, Int64, Int64)?
            for id in job.ids[part] {
                guard let row = byID[id], row.1 == append.stream else { return nil }
                positions.append(UInt64(max(row.2, 0)))
                last = row
            }
            guard let last else { return nil }
            results.append(
                AppendResult(
                    stream: append.stream, positions: positions, version: UInt64(max(last.3, 0)), alreadyRecorded: !storeIDs,
                    ids: job.ids[part], recordedAtMicroseconds: last.4, deleted: false))
        }
        return results
    }
}

/// The tests' fault (``PoolSwitch/losingAnswers``): how many of the next appends of a store
/// commit and then fail as if the connection had dropped before their answer came. Per store,
/// so that a grouped append, made by whichever task drains the queue, loses it too.
final class LosingAnswers: Sendable {
    /// The failure of a committed append whose answer was lost: a connection lost under it, as
    /// ``PoolSwitch/lostUnderCall(_:)`` and ``PoolSwitch/isFailover(_:)`` take it.
    struct Lost: Error, CustomStringConvertible {
        var description: String { "The answer of a committed append was lost (a test's fault)." }
    }

    private let remaining: Mutex<Int>

    init(_ count: Int = 0) {
        remaining = Mutex(count)
    }

    /// Loses the answers of the next `count` appends.
    func lose(_ count: Int) {
        remaining.withLock { $0 = count }
    }

    /// Whether to lose this answer (counting it).
    func take() -> Bool {
        remaining.withLock { remaining in
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
    }
}
