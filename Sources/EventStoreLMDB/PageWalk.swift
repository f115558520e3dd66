@_spi(Records) import EventStoreCore
import CLMDB
import Synchronization

/// How many entries ``EventStore/readEveryEntry(_:)`` read in one of LMDB's databases.
public struct DatabaseEntries: Sendable, Equatable {
    /// The database's name (`(free list)` and `(main)` for LMDB's own two).
    public let database: String
    /// The entries read.
    public let entries: Int
}

extension EventStore {
    /// Reads every key and value of every LMDB database of the store (LMDB's free list and main
    /// database, the log's tables and every table beside it), in one read snapshot, touching
    /// every byte: so every page of the data file that is in use is visited by LMDB.
    ///
    /// LMDB keeps no checksums of its pages and trusts them: a page damaged on disk can make
    /// LMDB read outside its map or fail an assertion, which stops the process. Run this in a
    /// process of its own before trusting a file that may be damaged (`esctl verify` and
    /// `esctl backup` do): a crash there is a report, not the caller's crash. `visit` is told
    /// each database's name before it is read, so the last name told says where a crash was.
    ///
    /// Throws ``EventStoreError`` with ``EventStoreError/Code/damaged`` for damage LMDB itself
    /// reports (a page that is not where its parent says), and the store's other errors.
    public func readEveryEntry(_ visit: (String) -> Void = { _ in }) throws -> [DatabaseEntries] {
        try environment.transaction(readOnly: true, commit: false) { txn in
            var counts: [DatabaseEntries] = []
            var checksum: UInt8 = 0
            func walk(_ name: String, _ dbi: MDB_dbi) throws {
                visit(name)
                let cursor = try txn.cursor(dbi)
                var entries = 0
                var entry = try cursor.first()
                while let (key, value) = entry {
                    // Every byte read, so that a value's overflow pages are touched too.
                    for byte in key { checksum &+= byte }
                    for byte in value { checksum &+= byte }
                    entries += 1
                    entry = try cursor.next()
                }
                counts.append(DatabaseEntries(database: name, entries: entries))
            }
            try walk("(free list)", 0)
            var names: [String] = []
            let main = try txn.cursor(Environment.mainDatabase)
            var entry = try main.first()
            while let (key, _) = entry {
                names.append(String(decoding: key, as: UTF8.self))
                entry = try main.next()
            }
            try walk("(main)", Environment.mainDatabase)
            for name in names {
                var dbi: MDB_dbi = 0
                let rc = mdb_dbi_open(txn.handle, name, 0, &dbi)
                // A key of the main database that is not a database is no table of ours: verify says so.
                if rc == MDB_INCOMPATIBLE || rc == MDB_NOTFOUND { continue }
                guard rc == MDB_SUCCESS else { throw EventStoreError.lmdb(rc, "opening the table '\(name)'") }
                try walk(name, dbi)
            }
            // Kept, so the reads of every byte are not optimized away.
            pageWalkSink.store(checksum, ordering: .relaxed)
            return counts
        }
    }
}

/// Where ``EventStore/readEveryEntry(_:)`` leaves the sum of the bytes it read.
private let pageWalkSink = Atomic<UInt8>(0)
