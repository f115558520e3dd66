@_spi(Records) import EventStoreCore
import Foundation

extension EventStore {
    /// Deletes `stream` if its version satisfies `expectedVersion`: removes its events from the
    /// log and from every index in one transaction, with the snapshots that name it, and appends
    /// a `$StreamDeleted` event (see ``StreamDeletion``) in the same transaction. Their positions
    /// become holes, never reused; their ids stay known forever (appending one again answers
    /// "already recorded" with ``AppendResult/deleted`` and writes nothing).
    ///
    /// A soft delete (`hard` false) lets a later append recreate the stream, continuing its
    /// version numbers; a hard delete also tombstones it, and every later append to it throws
    /// ``EventStoreError/Code/streamTombstoned``.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/invalidInput`` for a `$` name,
    /// ``EventStoreError/Code/notFound`` for a stream with no events (a hard delete of a stream
    /// whose events are all deleted already tombstones it, recording an empty range),
    /// ``EventStoreError/Code/versionConflict``, ``EventStoreError/Code/streamTombstoned`` for a
    /// stream already tombstoned, ``EventStoreError/Code/closed``. Nothing changes when it throws.
    public func deleteStream(_ stream: String, expectedVersion: ExpectedVersion = .any, hard: Bool = false) async throws
        -> StreamDeletion
    {
        try StreamMaintenance.validate(stream)
        let deletions = try await maintain(.delete(stream: stream, expectedVersion: expectedVersion, hard: hard))
        guard let deletion = deletions.first else {
            throw EventStoreError(.storageFailure, "The deletion of '\(stream)' committed without its record; run `esctl verify`.")
        }
        return deletion
    }

    /// Sets `stream`'s retention policy (an empty policy clears it). It removes nothing now:
    /// events beyond it are removed by the writer in the transaction of the stream's next
    /// append, and by ``purge()``.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/invalidInput`` for a part that is 0
    /// or over 2^63 − 1, or a `$` name; ``EventStoreError/Code/notFound`` for a stream that
    /// never had an event; ``EventStoreError/Code/streamTombstoned``; ``EventStoreError/Code/closed``.
    public func setRetention(_ policy: RetentionPolicy, for stream: String) async throws {
        try StreamMaintenance.validate(stream)
        try policy.validate()
        _ = try await maintain(.setRetention(stream: stream, policy: policy))
    }

    /// Applies every stream's retention policy now, in one transaction, and returns what each
    /// removed (streams that kept everything are not listed).
    public func purge() async throws -> [StreamDeletion] {
        try await maintain(.purge)
    }

    /// What the store knows of `stream`; nil when it never had an event.
    public func streamInfo(_ stream: String) throws -> StreamInfo? {
        let databases = environment.databases
        return try environment.read { txn in
            guard let head = try Self.streamHead(stream, txn, databases) else { return nil }
            return StreamInfo(
                stream: stream, version: head.version, firstVersion: max(head.state.first, 1),
                isTombstoned: head.state.isTombstoned, retention: head.state.retention)
        }
    }

    /// How many deletions removed events of `type` (nil: of any type), from the store's
    /// counters: projections compare it with what they recorded to see whether a deletion
    /// removed events they folded.
    package func deletionCount(ofType type: String?) throws -> UInt64 {
        let databases = environment.databases
        return try environment.read { txn in
            try MetaCounters.value(Schema.deletedTypePrefix + (type ?? ""), txn, databases)
        }
    }

    private func maintain(_ operation: StreamMaintenanceJob.Operation) async throws -> [StreamDeletion] {
        let generator = configuration.idGenerator
        let deletions = try await withCheckedThrowingContinuation { continuation in
            let job = StreamMaintenanceJob(operation, idGenerator: generator, continuation: continuation)
            do {
                try writer.submit(job)
            } catch {
                continuation.resume(throwing: error)
            }
        }
        return deletions
    }
}
