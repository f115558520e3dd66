@_spi(Records) import EventStoreCore
import CLMDB
import Foundation

/// A write job that deletes a stream, sets its retention policy, or applies every stream's
/// policy (purge), in the writer's transaction.
///
/// `@unchecked Sendable`: created on the caller's thread, then touched only by the writer thread
/// (see ``WriteJob``); the continuation is resumed exactly once, by `complete` or `fail`.
final class StreamMaintenanceJob: WriteJob, @unchecked Sendable {
    enum Operation {
        case delete(stream: String, expectedVersion: ExpectedVersion, hard: Bool)
        case setRetention(stream: String, policy: RetentionPolicy)
        case purge
    }

    private let operation: Operation
    private let idGenerator: @Sendable () -> UUID
    private let continuation: CheckedContinuation<[StreamDeletion], any Error>
    private var result: [StreamDeletion] = []
    let eventCount = 1

    init(
        _ operation: Operation, idGenerator: @escaping @Sendable () -> UUID,
        continuation: CheckedContinuation<[StreamDeletion], any Error>
    ) {
        self.operation = operation
        self.idGenerator = idGenerator
        self.continuation = continuation
    }

    func complete() { continuation.resume(returning: result) }

    func fail(_ error: EventStoreError) { continuation.resume(throwing: error) }

    func run(in context: inout BatchContext) throws(JobFailure) {
        result = []
        do {
            switch operation {
            case let .delete(stream, expectedVersion, hard):
                try delete(stream, expectedVersion: expectedVersion, hard: hard, context: &context)
            case let .setRetention(stream, policy):
                try setRetention(policy, stream: stream, context: context)
            case .purge:
                try purge(context: &context)
            }
        } catch let failure as JobFailure {
            throw failure
        } catch {
            throw .transaction(EventStoreError.wrapping(error))
        }
    }

    private func delete(_ stream: String, expectedVersion: ExpectedVersion, hard: Bool, context: inout BatchContext) throws {
        guard var head = try AppendJob.head(of: stream, context) else {
            guard expectedVersion.isSatisfied(by: 0) else {
                throw JobFailure.rejected(
                    EventStoreError.versionConflict([VersionConflict(stream: stream, expected: expectedVersion, actual: 0)]))
            }
            throw JobFailure.rejected(EventStoreError(.notFound, "The stream '\(stream)' has no events; there is nothing to delete."))
        }
        guard expectedVersion.isSatisfied(by: head.version) else {
            throw JobFailure.rejected(
                EventStoreError.versionConflict([VersionConflict(stream: stream, expected: expectedVersion, actual: head.version)]))
        }
        if head.state.isTombstoned { throw JobFailure.rejected(EventStoreError.tombstoned(stream)) }
        // A soft delete of a stream with no events left would record nothing; a hard one still tombstones it.
        if head.liveCount == 0 && !hard { throw JobFailure.rejected(StreamMaintenance.nothingToDelete(stream)) }
        result = [
            try StreamTrimming.remove(
                stream: stream, before: head.version &+ 1, head: &head, hard: hard, reason: StreamDeletion.delete, context: &context,
                idGenerator: idGenerator)
        ]
    }

    private func setRetention(_ policy: RetentionPolicy, stream: String, context: BatchContext) throws {
        guard var head = try AppendJob.head(of: stream, context) else {
            throw JobFailure.rejected(
                EventStoreError(.notFound, "The stream '\(stream)' has no events; append to it before giving it a retention policy."))
        }
        if head.state.isTombstoned { throw JobFailure.rejected(EventStoreError.tombstoned(stream)) }
        head.state.retention = policy.isEmpty ? nil : policy
        try head.store(as: stream, context.txn, context.databases)
        try Array((Schema.retentionPrefix + stream).utf8).withUnsafeBytes { key in
            if policy.isEmpty {
                _ = try context.txn.delete(context.databases.meta, key)
            } else {
                _ = try context.txn.put(context.databases.meta, key, UnsafeRawBufferPointer(start: nil, count: 0))
            }
        }
        try MetaCounters.markFormat(Schema.deletionFormat, context.txn, context.databases)
    }

    private func purge(context: inout BatchContext) throws {
        var streams: [String] = []
        let prefix = Array(Schema.retentionPrefix.utf8)
        let cursor = try context.txn.cursor(context.databases.meta)
        var entry = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
        while let (key, _) = entry, key.starts(with: prefix) {
            streams.append(String(decoding: key.dropFirst(prefix.count), as: UTF8.self))
            entry = try cursor.next()
        }
        for stream in streams {
            guard var head = try AppendJob.head(of: stream, context), let policy = head.state.retention else { continue }
            if let deletion = try StreamTrimming.apply(policy, stream: stream, head: &head, context: &context, idGenerator: idGenerator) {
                result.append(deletion)
            }
        }
    }
}
