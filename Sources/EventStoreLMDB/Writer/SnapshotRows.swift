@_spi(Records) import EventStoreCore
import CLMDB

extension SnapshotRows {
    /// Removes, in the deletion's transaction, every row of `t/$snapshots` whose key names
    /// `stream` (`NAME 00 STREAM 00 ...`): a snapshot folded from deleted (or trimmed) events goes
    /// with them, so that a command decides the same with or without it. Costs one pass over the
    /// snapshot rows (one per decider and stream set), not over the log.
    static func remove(naming stream: String, _ context: BatchContext) throws {
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(context.txn.handle, TableRegistry.prefix + table, 0, &dbi)
        if rc == MDB_NOTFOUND { return }
        guard rc == MDB_SUCCESS else { throw EventStoreError.lmdb(rc, "opening the snapshot table") }
        let needle = [0] + Array(stream.utf8) + [0]
        var doomed: [[UInt8]] = []
        let cursor = try context.txn.cursor(dbi)
        var entry = try cursor.first()
        while let (key, _) = entry {
            if key.firstRange(of: needle) != nil { doomed.append(Array(key)) }
            entry = try cursor.next()
        }
        for key in doomed { try key.withUnsafeBytes { _ = try context.txn.delete(dbi, $0) } }
    }
}
