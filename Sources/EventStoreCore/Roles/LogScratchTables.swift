/// Tables that one rebuild folds in before its state goes into the store: private to the lane
/// that made them, never synced, never read by anyone else, and gone when ``remove()`` is called
/// or the process dies (a rebuild whose process died starts its fold again).
///
/// What they are for: a rebuild that writes its batches into the store's own tables shares the
/// store's writer with appends, and its rows, spread over the tables' B-trees, make each commit
/// they ride in write and flush many pages. Folded here first, the state goes into the store
/// once, in key order, in short transactions (see `ProjectionRunner`).
///
/// Used by one task at a time (a lane's steps follow each other); every call is synchronous.
public protocol ScratchTables: AnyObject, Sendable {
    /// The value stored under `key` in `table`; nil when there is none.
    /// Throws ``EventStoreError`` when the scratch cannot be read.
    func value(_ table: String, _ key: [UInt8]) throws -> [UInt8]?

    /// Writes `changes` (a nil value deletes its key) and the fold's `checkpoint` atomically.
    /// Throws ``EventStoreError`` when the scratch cannot be written (a full disk): nothing of
    /// the batch is kept then.
    func commit(_ changes: [(table: String, rows: [(key: [UInt8], value: [UInt8]?)])], checkpoint: [UInt8]) throws

    /// The checkpoint of the last ``commit(_:checkpoint:)``; nil before the first.
    func checkpoint() throws -> [UInt8]?

    /// The rows of `table` in key order after `after` (from the first when nil), as many as fit
    /// in about `maximumBytes` of keys and values (at least one); empty past the last row.
    func rows(_ table: String, after: [UInt8]?, maximumBytes: Int) throws -> [(key: [UInt8], value: [UInt8])]

    /// Removes the tables and whatever holds them. Idempotent; nothing can be read after it.
    func remove()
}

/// A store that can give a rebuild ``ScratchTables`` (on LMDB: an environment of its own in the
/// store's directory). A store without this role folds rebuilds in its own tables.
public protocol LogScratchTables: StoreHandle {
    /// New, empty scratch tables for the rebuild of `projection`, replacing any that a process
    /// which died left for it. The caller must be the rebuild's owner (one process at a time).
    /// Throws ``EventStoreError`` when they cannot be made (permissions, a full disk).
    func scratchTables(for projection: String) async throws -> any ScratchTables
}
