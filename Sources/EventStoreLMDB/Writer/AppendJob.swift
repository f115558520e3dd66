@_spi(Records) import EventStoreCore
import CLMDB
import Foundation

/// An append of events to one or more streams, as the writer runs it: check idempotency, then
/// every expectation, then write, so that a rejected append has written nothing.
///
/// `@unchecked Sendable`: created on the caller's thread, then touched only by the writer thread
/// (see ``WriteJob``); the continuation is resumed exactly once, by `complete` or `fail`.
final class AppendJob: WriteJob, @unchecked Sendable {
    private let appends: [StreamAppend]
    /// The condition the append is made on (checked after idempotency, before expectations).
    private let condition: AppendCondition?
    /// The id of every event, given or generated, in the shape of `appends`.
    private let ids: [[UUID]]
    /// Called once, on the writer thread, with the outcome.
    private let completion: @Sendable (Result<[AppendResult], any Error>) -> Void
    /// Ids for the `$StreamDeleted` events of retention policies this append applies.
    private let idGenerator: @Sendable () -> UUID
    private var result: [AppendResult] = []
    let eventCount: Int
    /// Table writes to make in the same transaction once the events are newly written, with
    /// what the tables need to run them. Released when the job is done.
    private var tableWrites: TableWrites?
    /// The caller's own error from `tableWrites`, handed back as it was thrown.
    private var callerError: (any Error)?

    struct TableWrites {
        let environment: Environment
        let registry: TableRegistry
        /// A processor's tracking position, checked before anything else and recorded with the events.
        let tracking: TrackingPosition?
        let body: (@Sendable (TableTransaction, [AppendResult]) async throws -> Void)?
    }

    /// `appends` must already have passed ``Limits/validate(_:)`` and hold their data and
    /// metadata in ``StoredForm``.
    init(
        appends: [StreamAppend], condition: AppendCondition? = nil, idGenerator: @escaping @Sendable () -> UUID,
        tableWrites: TableWrites? = nil, completion: @escaping @Sendable (Result<[AppendResult], any Error>) -> Void
    ) {
        self.appends = appends
        self.condition = condition
        self.ids = appends.map { $0.events.map { $0.id ?? idGenerator() } }
        self.idGenerator = idGenerator
        self.completion = completion
        self.eventCount = appends.reduce(0) { $0 + $1.events.count }
        self.tableWrites = tableWrites
    }

    func complete() {
        tableWrites = nil
        completion(.success(result))
    }

    func fail(_ error: EventStoreError) {
        tableWrites = nil
        completion(.failure(callerError ?? error))
    }

    func run(in context: inout BatchContext) throws(JobFailure) {
        do {
            try checkTracking(context)
            if let recorded = try alreadyRecorded(context) {
                result = recorded
                // A processor that meets its own reaction already recorded has handled the event.
                try recordTracking(context)
                return
            }
            try checkCondition(context)
            var streams = try StreamSlots(appends, context)
            try checkExpectations(streams)
            result = try write(&streams, context: &context)
            try recordTracking(context)
            if let body = tableWrites?.body {
                let result = result
                try withTables(context) { tables in try await body(tables, result) }
            }
            // Last, so that a snapshot written with these events goes with the events it trims.
            try applyRetention(streams, context: &context)
        } catch let failure as JobFailure {
            throw failure
        } catch {
            throw .transaction(error as? EventStoreError ?? EventStoreError(.storageFailure, "\(error)"))
        }
    }

    /// Checks the tracking position against the recorded one and the head before anything is
    /// written: a refusal rejects this job alone.
    private func checkTracking(_ context: BatchContext) throws(JobFailure) {
        guard let writes = tableWrites, let tracking = writes.tracking else { return }
        let tables = LMDBTables(txn: context.txn, environment: writes.environment, registry: writes.registry)
        do {
            let recorded = try tables.withValue(TrackingPosition.table, Array(tracking.name.utf8)) { bytes in
                try TrackingPosition.recorded(tracking.name, from: bytes)
            }
            try tracking.check(recorded: recorded ?? 0, head: context.nextPosition - 1)
        } catch let error as EventStoreError where error.code == .alreadyProcessed || error.code == .invalidInput {
            throw .rejected(error)
        } catch {
            throw .transaction(EventStoreError.wrapping(error))
        }
    }

    /// Records the tracking position (when there is one) in this transaction.
    private func recordTracking(_ context: BatchContext) throws(JobFailure) {
        guard let writes = tableWrites, let tracking = writes.tracking else { return }
        let tables = LMDBTables(txn: context.txn, environment: writes.environment, registry: writes.registry)
        do {
            try tables.put(TrackingPosition.table, Array(tracking.name.utf8), BigEndian.bytes(of: tracking.position))
        } catch {
            throw .transaction(EventStoreError.wrapping(error))
        }
    }

    /// Runs table writes (the caller's) in this
    /// transaction. A full map or transaction goes back to the writer (it grows or splits and
    /// retries); the caller's own error rolls the batch back without this job and fails it.
    private func withTables(_ context: BatchContext, _ body: @escaping @Sendable (TableTransaction) async throws -> Void) throws(JobFailure) {
        guard let writes = tableWrites else { return }
        callerError = nil
        let transaction = TableTransaction(txn: context.txn, environment: writes.environment, registry: writes.registry, isWritable: true)
        defer { transaction.invalidate() }
        do {
            let owned = WriterOwned(transaction)
            try context.executor.run { try await body(owned.value) }.get()
        } catch let error as EventStoreError where error.lmdbCode == MDB_MAP_FULL || error.lmdbCode == MDB_TXN_FULL {
            throw .transaction(error)
        } catch {
            callerError = error
            throw .poisoned(EventStoreError.wrapping(error))
        }
    }

    /// When every event's given id is already recorded with the same content, the original
    /// results; nil when none is recorded. Rejects a partial or conflicting match.
    private func alreadyRecorded(_ context: BatchContext) throws -> [AppendResult]? {
        let databases = context.databases
        var results: [AppendResult] = []
        var found = 0
        for (append, ids) in zip(appends, ids) {
            var positions: [UInt64] = []
            var lastVersion: UInt64 = 0
            var recordedAt: Int64 = 0
            var deleted = false
            for (event, id) in zip(append.events, ids) where event.id != nil {
                let match: (position: UInt64, view: RecordView?)?
                do {
                    match = try EventStore.record(withID: id, context.txn, databases)
                } catch {
                    throw JobFailure.transaction(EventStoreError.wrapping(error))
                }
                guard let (position, view) = match else { continue }
                found += 1
                positions.append(position)
                // A deleted event's id stays recorded: its content is gone, so it cannot conflict.
                guard let view else {
                    deleted = true
                    continue
                }
                guard view.hasSameContent(stream: append.stream, event: event) else {
                    throw JobFailure.rejected(EventStoreError.idRecordedWithOtherContent(id, at: position))
                }
                lastVersion = view.version
                recordedAt = view.recordedAt
            }
            if deleted, lastVersion == 0 {
                do {
                    lastVersion = try Self.head(of: append.stream, context)?.version ?? 0
                } catch {
                    throw JobFailure.transaction(EventStoreError.wrapping(error))
                }
            }
            results.append(
                AppendResult(
                    stream: append.stream, positions: positions, version: lastVersion, alreadyRecorded: true, ids: ids,
                    recordedAtMicroseconds: recordedAt, deleted: deleted))
        }
        if found == 0 { return nil }
        guard found == eventCount else {
            throw JobFailure.rejected(EventStoreError.partlyRecorded)
        }
        return results
    }

    /// Refuses the append when an event after the condition's position matches its query. The
    /// check runs in the batch's transaction, so it sees every earlier job of the batch.
    private func checkCondition(_ context: BatchContext) throws {
        guard let condition else { return }
        if let after = condition.after, after >= context.nextPosition {
            throw JobFailure.rejected(EventStoreError.conditionBeyondHead(after, head: context.nextPosition - 1))
        }
        let match: (position: UInt64, item: Int)?
        do {
            match = try QueryIndexes.firstMatch(
                of: condition.failIfEventsMatch, after: condition.after ?? 0, context.txn, context.databases)
        } catch {
            throw JobFailure.transaction(EventStoreError.wrapping(error))
        }
        if let match { throw JobFailure.rejected(EventStoreError.conditionFailed(at: match.position, item: match.item)) }
    }

    /// The streams of an append, each resolved once: its name hashed once per part, its head read
    /// once, then taken by index by the expectations, the writes and retention (S1's appends name
    /// a thousand streams each; a dictionary of heads and sets of names rehashed each name seven
    /// times a batch).
    struct StreamSlots {
        /// Each stream's head (nil for a new stream), in the order of first mention; written back
        /// as the parts are written.
        var heads: [StreamHead?] = []
        /// For each stream, the part that names it first (whose expectation counts).
        var firstPart: [Int] = []
        /// For each part of the append, its stream's index in `heads`.
        var slotOfPart: [Int] = []

        init(_ appends: [StreamAppend], _ context: BatchContext) throws {
            heads.reserveCapacity(appends.count)
            firstPart.reserveCapacity(appends.count)
            slotOfPart.reserveCapacity(appends.count)
            guard appends.count > 1 else {
                for (part, append) in appends.enumerated() { try add(append.stream, part: part, context) }
                return
            }
            var slots: [String: Int] = [:]
            slots.reserveCapacity(appends.count)
            for (part, append) in appends.enumerated() {
                // One lookup: the modify accessor finds the entry or makes it.
                let next = heads.count
                let slot = Self.claim(&slots[append.stream, default: -1], next: next)
                if slot == next {
                    try add(append.stream, part: part, context)
                } else {
                    slotOfPart.append(slot)
                }
            }
        }

        private static func claim(_ slot: inout Int, next: Int) -> Int {
            if slot < 0 { slot = next }
            return slot
        }

        private mutating func add(_ stream: String, part: Int, _ context: BatchContext) throws {
            slotOfPart.append(heads.count)
            firstPart.append(part)
            heads.append(try AppendJob.head(of: stream, context))
        }
    }

    /// Checks each stream's expectation (a stream's later parts expect `.any`); rejects with every
    /// failed one, and a tombstoned stream whatever its expectation.
    private func checkExpectations(_ streams: StreamSlots) throws {
        var conflicts: [VersionConflict] = []
        for (slot, part) in streams.firstPart.enumerated() {
            let append = appends[part]
            let head = streams.heads[slot]
            // A tombstoned stream takes nothing, whatever the expectation (checked before any write).
            if head?.state.isTombstoned == true { throw JobFailure.rejected(EventStoreError.tombstoned(append.stream)) }
            let actual = head?.version ?? 0
            if !append.expectedVersion.isSatisfied(by: actual) {
                conflicts.append(VersionConflict(stream: append.stream, expected: append.expectedVersion, actual: actual))
            }
        }
        if !conflicts.isEmpty {
            throw JobFailure.rejected(EventStoreError.versionConflict(conflicts))
        }
    }

    static func head(of stream: String, _ context: BatchContext) throws -> StreamHead? {
        var name = stream
        let stored = try name.withUTF8 { try context.txn.get(context.databases.streams, UnsafeRawBufferPointer($0)) }
        guard let stored else { return nil }
        guard let head = StreamHead(stored) else {
            throw JobFailure.transaction(
                EventStoreError(.damaged, "The head of stream '\(stream)' is unreadable; run `esctl verify`."))
        }
        return head
    }

    /// Writes the head's pending positions, a full chunk, under (stream number, first version).
    private static func writeChunk(_ head: StreamHead, txn: Transaction, databases: Databases, stream: String) throws {
        let start = head.version - UInt64(Schema.indexChunk) + 1
        let written = try withUnsafeTemporaryAllocation(byteCount: 8 * Schema.indexChunk, alignment: 8) { buffer in
            guard let base = buffer.baseAddress else { return false }
            for (index, position) in head.pending.enumerated() { BigEndian.store(position, into: base, at: 8 * index) }
            return try BigEndian.withIndexKey(stream: head.number, version: start) {
                try txn.put(databases.streamIndex, $0, UnsafeRawBufferPointer(buffer), flags: MDB_NOOVERWRITE)
            }
        }
        guard written else {
            throw JobFailure.transaction(
                EventStoreError(
                    .damaged, "The stream index already holds versions \(start)... of '\(stream)'; run `esctl verify`."))
        }
    }

    private func write(_ streams: inout StreamSlots, context: inout BatchContext) throws -> [AppendResult] {
        let txn = context.txn
        let databases = context.databases
        var results: [AppendResult] = []
        results.reserveCapacity(appends.count)
        for (part, (append, ids)) in zip(appends, ids).enumerated() {
            let slot = streams.slotOfPart[part]
            // A new stream takes the next number once its first part is written.
            var head = try streams.heads[slot] ?? StreamHead(number: UInt64(txn.entryCount(databases.streams)) + 1, version: 0)
            let positions = try Self.writeEvents(append.events, ids: ids, stream: append.stream, head: &head, context: &context)
            streams.heads[slot] = head
            results.append(
                AppendResult(
                    stream: append.stream, positions: positions, version: head.version, alreadyRecorded: false, ids: ids,
                    recordedAtMicroseconds: context.recordedAt))
        }
        return results
    }

    /// Each stream written with a retention policy loses what it no longer keeps, in this
    /// transaction: after every part, so that the call's events keep consecutive positions.
    private func applyRetention(_ streams: StreamSlots, context: inout BatchContext) throws {
        for (slot, part) in streams.firstPart.enumerated() {
            guard var head = streams.heads[slot], let policy = head.state.retention else { continue }
            _ = try StreamTrimming.apply(policy, stream: appends[part].stream, head: &head, context: &context, idGenerator: idGenerator)
        }
    }

    /// Writes `events` to `stream` after `head` (which it advances, and stores): records, index
    /// chunks and ids. Returns their positions.
    static func writeEvents(
        _ events: [NewEvent], ids: [UUID], stream: String, head: inout StreamHead, context: inout BatchContext
    ) throws -> [UInt64] {
        let txn = context.txn
        let databases = context.databases
        var positions: [UInt64] = []
        positions.reserveCapacity(events.count)
        var streamName = stream
        try streamName.withUTF8 { streamBytes in
            for (event, id) in zip(events, ids) {
                head.version += 1
                let position = context.nextPosition
                var type = event.type
                try type.withUTF8 { typeBytes in
                    let size = RecordCodec.encodedSize(
                        streamBytes: streamBytes.count, typeBytes: typeBytes.count,
                        dataBytes: event.data.count, metadataBytes: event.metadata.count, tags: event.tags)
                    let space = try BigEndian.withBytes(of: position) {
                        try txn.reserve(databases.events, $0, size: size, flags: MDB_APPEND)
                    }
                    RecordCodec.encode(
                        into: space, position: position, stream: UnsafeRawBufferPointer(streamBytes),
                        type: UnsafeRawBufferPointer(typeBytes), version: head.version,
                        recordedAt: event.recordedAtMicroseconds ?? context.recordedAt, id: id, data: event.data,
                        metadata: event.metadata, schemaVersion: event.schemaVersion, tags: event.tags, dataFormat: event.dataFormat)
                    try QueryIndexes.add(type: UnsafeRawBufferPointer(typeBytes), tags: event.tags, at: position, txn, databases)
                }
                head.pending.append(position)
                if head.pending.count == Schema.indexChunk {
                    // A full chunk goes to the stream index; the head keeps only the rest.
                    try Self.writeChunk(head, txn: txn, databases: databases, stream: stream)
                    head.pending.removeAll(keepingCapacity: true)
                }
                try BigEndian.withBytes(of: position) { positionBytes in
                    let isNewID = try withUnsafeBytes(of: id.uuid) {
                        try txn.put(databases.eventIDs, $0, positionBytes, flags: MDB_NOOVERWRITE)
                    }
                    guard isNewID else {
                        throw JobFailure.poisoned(EventStoreError.generatedIDRecorded(id))
                    }
                }
                positions.append(position)
                context.nextPosition += 1
            }
            _ = try head.withBytes { try txn.put(databases.streams, UnsafeRawBufferPointer(streamBytes), $0) }
        }
        return positions
    }
}
