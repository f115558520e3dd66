@_spi(Records) import EventStoreCore
import CLMDB
import Foundation

/// Removes the oldest versions of a stream inside a write transaction: the records, the index
/// chunks that held only them, and the stream's state; counts them in `meta`; and appends the
/// `$StreamDeleted` event that records it. Ids stay in `event_ids` forever, pointing to their
/// holes. Every deletion, by command or by policy, goes through here.
enum StreamTrimming {
    /// Applies `policy` to `stream` (whose head, `head`, is written back): returns the deletion,
    /// or nil when the policy keeps every event.
    static func apply(
        _ policy: RetentionPolicy, stream: String, head: inout StreamHead, context: inout BatchContext,
        idGenerator: @Sendable () -> UUID
    ) throws -> StreamDeletion? {
        let txn = context.txn
        let databases = context.databases
        let keep = try policy.firstKept(version: head.version, first: head.state.first, now: context.recordedAt) { from, cutoff in
            var found = head.version &+ 1
            var version = from
            try EventStore.forEachPosition(
                of: head, stream: stream, from: from, direction: .forward, limit: .max, txn, databases
            ) { position in
                if try EventStore.indexedRecord(at: position, of: stream, txn, databases).recordedAt >= cutoff {
                    found = version
                    return false
                }
                version += 1
                return true
            }
            return found
        }
        guard keep > head.state.first else { return nil }
        return try remove(
            stream: stream, before: keep, head: &head, hard: false, reason: StreamDeletion.retention, context: &context, idGenerator: idGenerator)
    }

    /// Removes versions `head.state.first ..< before` of `stream` (when `hard`, also tombstones
    /// it) and the command snapshots that name it, writes the head, counts the deletion and
    /// appends its `$StreamDeleted` event.
    static func remove(
        stream: String, before: UInt64, head: inout StreamHead, hard: Bool, reason: String, context: inout BatchContext,
        idGenerator: @Sendable () -> UUID
    ) throws -> StreamDeletion {
        let txn = context.txn
        let databases = context.databases
        let from = head.state.first
        let through = min(before, head.version &+ 1) &- 1
        var positions: [UInt64] = []
        if through >= from {
            positions.reserveCapacity(Int(min(through - from + 1, 1 << 20)))
            try EventStore.forEachPosition(
                of: head, stream: stream, from: from, direction: .forward, limit: Int(clamping: through - from + 1), txn, databases
            ) { position in
                positions.append(position)
                return true
            }
        }
        var types = Set<String>()
        for position in positions {
            let record = try EventStore.indexedRecord(at: position, of: stream, txn, databases)
            types.insert(String(decoding: record.typeBytes, as: UTF8.self))
            try QueryIndexes.remove(record, at: position, txn, databases)
            try BigEndian.withBytes(of: position) { _ = try txn.delete(databases.events, $0) }
        }
        // Full chunks that hold only removed versions go; a chunk that still holds kept ones stays
        // (readers start at the first kept version).
        let fullChunksEnd = head.version - UInt64(head.pending.count)
        var chunk = StreamHead.chunkStart(of: max(from, 1))
        while chunk + UInt64(Schema.indexChunk) - 1 <= min(through, fullChunksEnd) {
            try BigEndian.withIndexKey(stream: head.number, version: chunk) { _ = try txn.delete(databases.streamIndex, $0) }
            chunk += UInt64(Schema.indexChunk)
        }
        head.state.first = max(from, through &+ 1)
        if hard { head.state.isTombstoned = true }
        try head.store(as: stream, txn, databases)

        let removed = UInt64(positions.count)
        try MetaCounters.add(removed, to: Schema.deletedCountKey, txn, databases)
        if removed > 0 {
            let prefixes = reason == StreamDeletion.retention ? [Schema.deletedTypePrefix, Schema.trimmedTypePrefix] : [Schema.deletedTypePrefix]
            for prefix in prefixes {
                try MetaCounters.add(1, to: prefix, txn, databases)
                for type in types { try MetaCounters.add(1, to: prefix + type, txn, databases) }
            }
        }
        try MetaCounters.markFormat(Schema.deletionFormat, txn, databases)
        if removed > 0 || hard { try SnapshotRows.remove(naming: stream, context) }

        var deletion = StreamDeletion(
            stream: stream, fromVersion: from, toVersion: through, hard: hard, reason: reason, types: types.sorted())
        let event = NewEvent(type: StreamDeletion.eventType, data: deletion.eventData)
        var systemHead =
            try AppendJob.head(of: StreamDeletion.systemStream, context)
            ?? StreamHead(number: UInt64(txn.entryCount(databases.streams)) + 1, version: 0)
        let written = try AppendJob.writeEvents(
            [event], ids: [idGenerator()], stream: StreamDeletion.systemStream, head: &systemHead, context: &context)
        deletion.position = written[0]
        return deletion
    }
}

/// Counters and markers in the `meta` database.
enum MetaCounters {
    /// The u64 under `key`; 0 when absent.
    static func value(_ key: String, _ txn: Transaction, _ databases: Databases) throws -> UInt64 {
        try Array(key.utf8).withUnsafeBytes { keyBytes in
            guard let stored = try txn.get(databases.meta, keyBytes), stored.count == 8 else { return 0 }
            return BigEndian.uint64(stored)
        }
    }

    /// Adds `amount` to the u64 under `key` (saturating).
    static func add(_ amount: UInt64, to key: String, _ txn: Transaction, _ databases: Databases) throws {
        let total = try value(key, txn, databases).addingReportingOverflow(amount)
        try Array(key.utf8).withUnsafeBytes { keyBytes in
            try BigEndian.withBytes(of: total.overflow ? .max : total.partialValue) { _ = try txn.put(databases.meta, keyBytes, $0) }
        }
    }

    /// Raises the store's format marker to `format` (never lowers it).
    static func markFormat(_ format: UInt32, _ txn: Transaction, _ databases: Databases) throws {
        try Array(Schema.formatKey.utf8).withUnsafeBytes { key in
            if let stored = try txn.get(databases.meta, key), stored.count == 4, BigEndian.uint32(stored) >= format { return }
            _ = try withUnsafeBytes(of: format.bigEndian) { try txn.put(databases.meta, key, $0) }
        }
    }
}
