import EventStoreCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Client-side group commit: appends queued while a call is in flight go together in the next
/// call of the server's append function (one round trip, one commit, one head-row lock), as the
/// LMDB writer groups them in one transaction. Each job stays its own atomic unit: the function
/// answers each one, and a call that fails as a whole is retried one job at a time, so an error
/// reaches only the job that caused it.
final class Appender: Sendable {
    /// One caller's append, and the caller waiting for it.
    struct Job: Sendable {
        let request: AppendRequest
        let continuation: CheckedContinuation<[AppendResult], any Error>
    }

    private struct State {
        var queue: [Job] = []
        var isRunning = false
        var isClosed = false
        /// Who waits for the drain to stop (``drained()``).
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let calls = Atomic<UInt64>(0)
    private let completed = Atomic<UInt64>(0)

    /// Transactions committed (calls of the append function, and the table API's write
    /// transactions) and writes completed (appends and table writes).
    var statistics: WriterStatistics {
        WriterStatistics(commits: calls.load(ordering: .relaxed), completedWrites: completed.load(ordering: .relaxed))
    }

    /// Counts a write committed in a transaction of its own, outside the append function's
    /// calls (tables opened, writeTables, an append with alsoWriting): one commit, one write, as
    /// LMDB's writer counts each such job.
    func countCommittedWrite() {
        calls.add(1, ordering: .relaxed)
        completed.add(1, ordering: .relaxed)
    }

    private let client: PoolSwitch
    private let clock: @Sendable () -> Date
    private let maximumEventsPerCall: Int
    private let logger: Logger
    private let metrics: StoreMetrics
    private let headSignal: HeadSignal
    /// Applies a stream's retention policy (set once the store is open; see ``PostgresEventStore``).
    private let trimmer = Mutex<(@Sendable (String) async throws -> [StreamDeletion])?>(nil)

    func setTrimmer(_ trim: @escaping @Sendable (String) async throws -> [StreamDeletion]) {
        trimmer.withLock { $0 = trim }
    }

    private func trim(_ stream: String) async throws -> [StreamDeletion] {
        guard let trim = trimmer.withLock({ $0 }) else { return [] }
        return try await trim(stream)
    }

    init(
        client: PoolSwitch, clock: @escaping @Sendable () -> Date, maximumEventsPerCall: Int, logger: Logger,
        metrics: StoreMetrics, headSignal: HeadSignal
    ) {
        self.metrics = metrics
        self.client = client
        self.clock = clock
        self.maximumEventsPerCall = max(maximumEventsPerCall, 1)
        self.logger = logger
        self.headSignal = headSignal
    }

    /// Queues a job; the first job of an idle appender starts the drain.
    func submit(_ job: Job) {
        let start = state.withLock { state -> Bool? in
            guard !state.isClosed else { return nil }
            state.queue.append(job)
            guard !state.isRunning else { return false }
            state.isRunning = true
            return true
        }
        switch start {
        case nil: job.continuation.resume(throwing: EventStoreError.closedStore)
        case true?: Task { await drain() }
        case false?: break
        }
    }

    /// How many jobs wait for a call to take them (for tests, as the LMDB writer's `queuedJobCount`).
    var queuedJobCount: Int { state.withLock { $0.queue.count } }

    /// Refuses new jobs; the queued ones are still appended.
    func shutDown() {
        state.withLock { $0.isClosed = true }
    }

    /// Returns once nothing is queued or in flight.
    func drained() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { state -> Bool in
                guard state.isRunning else { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Job] in
                var taken: [Job] = []
                var events = 0
                while let next = state.queue.first, taken.isEmpty || events + next.request.eventCount <= maximumEventsPerCall {
                    taken.append(state.queue.removeFirst())
                    events += next.request.eventCount
                }
                if taken.isEmpty { state.isRunning = false }
                return taken
            }
            guard !batch.isEmpty else {
                for waiter in state.withLock({ state -> [CheckedContinuation<Void, Never>] in
                    defer { state.waiters.removeAll() }
                    return state.waiters
                }) { waiter.resume() }
                return
            }
            await run(batch)
        }
    }

    /// Appends `batch` in one call. `madeAgainAt`: the time of a call made again after a
    /// failover that this batch was split from, whose jobs are made again as it was (the same
    /// time, every id looked up), since its first try may have committed.
    private func run(_ batch: [Job], madeAgainAt: Int64? = nil) async {
        var retry = madeAgainAt.map { RetryMark(now: $0) } ?? RetryMark(now: ContentTime.microseconds(clock()))
        if madeAgainAt != nil { retry.happened = true }
        do {
            let started = ContinuousClock.now
            let outcomes = try await call(batch, &retry)
            let elapsed = ContinuousClock.now - started
            calls.add(1, ordering: .relaxed)
            var head: UInt64 = 0
            var (appends, events) = (0, 0)
            for outcome in outcomes {
                guard case let .success(results) = outcome else { continue }
                head = max(head, results.compactMap { $0.alreadyRecorded ? nil : $0.positions.last }.max() ?? 0)
                completed.add(1, ordering: .relaxed)
                appends += 1
                events += results.reduce(0) { $0 + ($1.alreadyRecorded ? 0 : $1.positions.count) }
            }
            // Counted before anyone is told: a caller whose append returned finds it in the metrics.
            metrics.committed(appends: appends, events: events, duration: elapsed)
            // The head moves before anyone is told, too: `subscribe(from: .end)` takes the signal's
            // head, and a caller whose append returned must not see its own events as new.
            if head > 0 { headSignal.publish(head) }
            for (job, outcome) in zip(batch, outcomes) {
                switch outcome {
                case let .success(results): job.continuation.resume(returning: results)
                case let .failure(error): job.continuation.resume(throwing: error)
                }
            }
        } catch {
            // A failover's error (or an outcome unknown after one) is no job's fault: each job
            // alone would wait for the servers again, and a closing handle for every one of them.
            guard batch.count > 1, !client.survives(error), (error as? EventStoreError)?.code != .outcomeUnknown else {
                let mapped = Self.mapped(error)
                for job in batch { job.continuation.resume(throwing: mapped) }
                return
            }
            // One job broke the whole call: each job alone finds which.
            logger.debug("a grouped append failed; appending its jobs one by one", metadata: ["reason": "\(error)"])
            for job in batch { await run([job], madeAgainAt: retry.happened ? retry.now : nil) }
        }
    }

    static func mapped(_ error: any Error) -> EventStoreError {
        if let error = error as? PSQLError, let info = error.serverInfo, info[.sqlState] == "23505",
            info[.constraintName] == "events_id"
        {
            // The detail reads "Key (id)=(UUID) already exists."
            let detail = info[.detail] ?? ""
            if let open = detail.range(of: "=("), let close = detail.range(of: ")", range: open.upperBound..<detail.endIndex),
                let id = UUID(uuidString: String(detail[open.upperBound..<close.lowerBound]))
            {
                return EventStoreError.generatedIDRecorded(id)
            }
        }
        return PostgresErrors.mapped(error, location: "the database")
    }

    /// Calls the append function once for the whole batch and reads each job's outcome.
    private func call(_ batch: [Job], _ retry: inout RetryMark) async throws -> [Result<[AppendResult], EventStoreError>] {
        let made = AppendCall(batch.map(\.request), now: retry.now)
        let first = retry.happened ? made.retried() : made
        let (call, rows) = try await AppendRetry.run(first, on: client, logger: logger, isClosing: { state.withLock { $0.isClosed } }) {
            call in
            if call.isRetry { retry.happened = true }
            return (call, try await client.rows(call.query, logger: logger, answeredWithin: PoolSwitch.answerPatience))
        }
        let answers = try rows.map { try $0.decode(AppendCall.Row.self) }
        // Streams with a retention policy lose what they no longer keep before the appends
        // return (in a transaction of their own: the append function cannot write the
        // `$StreamDeleted` event's checksum). A failure leaves it to the next append or purge.
        for stream in call.streamsWithPolicies(answers).sorted() {
            do {
                _ = try await trim(stream)
            } catch {
                logger.warning("applying a stream's retention policy failed", metadata: ["stream": "\(stream)", "reason": "\(error)"])
            }
        }
        return await call.settlingLostTries(call.outcomes(answers)) { query in try await client.rows(query, logger: logger) }
    }
}

/// The time of a grouped call, and whether it was made again after a failover: its jobs, split
/// after a failure, are then made again as it was.
private struct RetryMark {
    let now: Int64
    var happened = false
}

/// One call of the append function: its arguments, and the reading of its answer.
struct AppendCall {
    /// A row of the function's answer: job, part, outcome, positions, version, recorded_at, detail.
    typealias Row = (Int32, Int32?, String, [Int64]?, Int64?, Int64?, Int64?)

    let batch: [AppendRequest]
    private(set) var arguments: AppendArguments
    /// Whether this is the same call made again after its outcome was lost (``retried()``).
    private(set) var isRetry = false

    init(_ batch: [AppendRequest], now: Int64) {
        self.batch = batch
        var arguments = AppendArguments(now: now)
        for job in batch { arguments.add(job) }
        self.arguments = arguments
    }

    /// The same call, to be made again when its first outcome is unknown: the same ids and
    /// times, every id treated as given, so that the function answers events the first call
    /// recorded as recorded (it looks up only given ids), where an id the store generated would
    /// otherwise meet its own committed event as a conflict. ``outcomes(_:)`` then answers those
    /// jobs as written (`alreadyRecorded` false): they were, by this call.
    func retried() -> AppendCall {
        var call = self
        call.arguments.eventGiven = Array(repeating: true, count: arguments.eventGiven.count)
        call.isRetry = true
        return call
    }

    var query: PostgresQuery {
        """
        SELECT job, part, outcome, positions, version, recorded_at, detail FROM eventstore.append(
            \(arguments.jobFirstPart), \(arguments.jobPartCount), \(arguments.trackingNames), \(arguments.trackingPositions),
            \(arguments.trackingPrevious), \(arguments.partStreams), \(arguments.partExpected), \(arguments.partFirstEvent),
            \(arguments.partEventCount), \(arguments.eventIDs), \(arguments.eventGiven), \(arguments.eventTypes),
            \(arguments.eventData), \(arguments.eventMetadata), \(arguments.eventRecordedAt), \(arguments.eventChecksums),
            \(arguments.eventSchemaVersions), \(arguments.eventTagFirst), \(arguments.eventTagCount), \(arguments.tagValues),
            \(arguments.eventBinary), \(arguments.trackingUpstream), \(arguments.now))
        """
    }

    /// The streams written whose retention policy the client applies next (`detail` 1 on a
    /// `written` row).
    func streamsWithPolicies(_ rows: [Row]) -> Set<String> {
        var streams = Set<String>()
        for (_, part, outcome, _, _, _, detail) in rows where outcome == "written" && detail == 1 {
            if let part, arguments.partStreams.indices.contains(Int(part) - 1) { streams.insert(arguments.partStreams[Int(part) - 1]) }
        }
        return streams
    }

    /// The one job's results, the streams whose policy now trims them, and whether this call
    /// wrote its events (not a try before it), from the function's rows (as they came from the
    /// server), for an append made alone in `connection`'s transaction; the job's error when it
    /// was refused.
    func singleOutcome(_ rows: [PostgresRow], _ connection: PostgresConnection, _ logger: Logger) async throws
        -> ([AppendResult], Set<String>, wrote: Bool)
    {
        let decoded = try rows.map { try $0.decode(Row.self) }
        let settled = await settlingLostTries(outcomes(decoded)) { query in try await connection.rows(query, logger: logger) }
        guard let outcome = settled.first else {
            throw EventStoreError(.storageFailure, "The append function answered nothing.")
        }
        return (try outcome.get(), streamsWithPolicies(decoded), decoded.contains { $0.2 == "written" })
    }

    /// The ids the function looks up before it writes: those the caller gave, and on a retry
    /// every one (``retried()``).
    var lookedUpIDs: [UUID] {
        zip(arguments.eventIDs, arguments.eventGiven).compactMap { id, given in given ? id : nil }
    }

    /// Each job's results or error, from the function's rows.
    func outcomes(_ rows: [Row]) -> [Result<[AppendResult], EventStoreError>] {
        var answers = Array(repeating: JobAnswer(), count: batch.count)
        for (job, part, outcome, positions, version, recordedAt, detail) in rows {
            let index = Int(job) - 1
            guard answers.indices.contains(index) else { continue }
            answers[index].rows.append(
                AnswerRow(
                    part: part.map { Int($0) - 1 - arguments.firstPart(ofJob: index) }, outcome: outcome, positions: positions ?? [],
                    version: version, recordedAt: recordedAt, detail: detail))
        }
        return zip(batch, answers).map { job, answer in
            let outcome = answer.outcome(for: job, arguments: arguments)
            // A retried job whose ids were all the store's: recorded means written by the try
            // whose answer was lost (those ids were never anyone else's).
            guard isRetry, job.appends.allSatisfy({ $0.events.allSatisfy { $0.id == nil } }), case let .success(results) = outcome else {
                return outcome
            }
            return .success(
                results.map {
                    AppendResult(
                        stream: $0.stream, positions: $0.positions, version: $0.version, alreadyRecorded: false, ids: $0.ids,
                        recordedAtMicroseconds: $0.recordedAtMicroseconds, deleted: $0.deleted)
                })
        }
    }
}

/// One caller's append (in stored form, checked against the limits), with the ids it will carry.
struct AppendRequest: Sendable {
    let appends: [StreamAppend]
    let ids: [[UUID]]
    let tracking: TrackingPosition?

    var eventCount: Int { appends.reduce(0) { $0 + $1.events.count } }
}

/// The microseconds since 1970 of a `Date`, as the LMDB writer computes them.
enum ContentTime {
    static func microseconds(_ date: Date) -> Int64 {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded(.down)
        guard micros.isFinite else { return 0 }
        return Int64(min(max(micros, Double(Limits.recordedAtRange.lowerBound)), Double(Limits.recordedAtRange.upperBound)))
    }
}

/// One row the append function answered for a job; `part` is the part's index within its job.
private struct AnswerRow {
    let part: Int?
    let outcome: String
    let positions: [Int64]
    let version: Int64?
    let recordedAt: Int64?
    let detail: Int64?
}

/// Every row answered for one job, turned into its results or its error.
private struct JobAnswer {
    var rows: [AnswerRow] = []

    func outcome(for job: AppendRequest, arguments: AppendArguments) -> Result<[AppendResult], EventStoreError> {
        var results: [AppendResult] = []
        var conflicts: [VersionConflict] = []
        for row in rows {
            switch row.outcome {
            case "written", "recorded":
                guard let part = row.part, job.appends.indices.contains(part) else { continue }
                results.append(
                    AppendResult(
                        stream: job.appends[part].stream, positions: row.positions.map { UInt64(max($0, 0)) },
                        version: UInt64(max(row.version ?? 0, 0)), alreadyRecorded: row.outcome == "recorded", ids: job.ids[part],
                        recordedAtMicroseconds: row.recordedAt ?? 0, deleted: row.outcome == "recorded" && row.detail == 1))
            case "tombstoned":
                guard let part = row.part, job.appends.indices.contains(part) else { continue }
                return .failure(EventStoreError.tombstoned(job.appends[part].stream))
            case "conflict":
                guard let part = row.part, job.appends.indices.contains(part) else { continue }
                conflicts.append(
                    VersionConflict(
                        stream: job.appends[part].stream, expected: job.appends[part].expectedVersion,
                        actual: UInt64(max(row.version ?? 0, 0))))
            case "idConflict":
                let id = row.detail.flatMap { arguments.eventID(at: Int($0) - 1) } ?? nilID
                return .failure(EventStoreError.idRecordedWithOtherContent(id, at: UInt64(max(row.version ?? 0, 0))))
            case "partial":
                return .failure(EventStoreError.partlyRecorded)
            case "beyondHead", "processed", "moved":
                guard let tracking = job.tracking else { continue }
                let head = row.outcome == "beyondHead" ? UInt64(max(row.detail ?? 0, 0)) : .max
                let recorded = row.outcome == "beyondHead" ? 0 : UInt64(max(row.detail ?? 0, 0))
                do {
                    try tracking.check(recorded: recorded, head: head)
                } catch {
                    return .failure(error)
                }
            default:
                return .failure(EventStoreError(.storageFailure, "The append function answered '\(row.outcome)', which this program does not know."))
            }
        }
        if !conflicts.isEmpty { return .failure(EventStoreError.versionConflict(conflicts)) }
        guard results.count == job.appends.count else {
            return .failure(
                EventStoreError(.storageFailure, "The append function answered \(results.count) of \(job.appends.count) parts of an append."))
        }
        return .success(results)
    }
}

/// Stands for an id the function named but the client cannot find (never expected).
private let nilID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
