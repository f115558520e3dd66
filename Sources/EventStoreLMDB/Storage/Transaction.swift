@_spi(Records) import EventStoreCore
import CLMDB

/// A live LMDB transaction (read or write). A value of this type is only handed to synchronous
/// closures and must not escape them: LMDB ends the transaction when the closure returns.
/// Every LMDB return code is checked; failures throw ``EventStoreError``.
struct Transaction {
    let handle: OpaquePointer

    /// The value stored under `key`, or nil when there is none. The bytes live in the map and are
    /// valid until the transaction ends or (in a write transaction) the next write.
    func get(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws(EventStoreError) -> UnsafeRawBufferPointer? {
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var value = MDB_val()
        let rc = mdb_get(handle, dbi, &keyValue, &value)
        if rc == MDB_NOTFOUND { return nil }
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "reading a key") }
        return UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
    }

    /// Stores `value` under `key`. With `MDB_NOOVERWRITE`, an existing key makes it return false
    /// instead of writing; otherwise it returns true.
    @discardableResult
    func put(
        _ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: Int32 = 0
    ) throws(EventStoreError) -> Bool {
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var dataValue = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_put(handle, dbi, &keyValue, &dataValue, UInt32(flags))
        if rc == MDB_KEYEXIST && flags & MDB_NOOVERWRITE != 0 { return false }
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "writing a key") }
        return true
    }

    /// Reserves `size` bytes under `key` and returns them for the caller to fill before the next
    /// write (`MDB_RESERVE`), so a record is encoded straight into the map without a copy.
    func reserve(
        _ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, size: Int, flags: Int32 = 0
    ) throws(EventStoreError) -> UnsafeMutableRawBufferPointer {
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var dataValue = MDB_val(mv_size: size, mv_data: nil)
        let rc = mdb_put(handle, dbi, &keyValue, &dataValue, UInt32(flags | MDB_RESERVE))
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "reserving space for a record") }
        return UnsafeMutableRawBufferPointer(start: dataValue.mv_data, count: size)
    }

    /// Deletes one value of a DUPSORT key; returns false when it was not there.
    @discardableResult
    func delete(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(EventStoreError) -> Bool {
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var dataValue = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_del(handle, dbi, &keyValue, &dataValue)
        if rc == MDB_NOTFOUND { return false }
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "deleting a key's value") }
        return true
    }

    /// Deletes `key`; returns false when it was not there.
    @discardableResult
    func delete(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws(EventStoreError) -> Bool {
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_del(handle, dbi, &keyValue, nil)
        if rc == MDB_NOTFOUND { return false }
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "deleting a key") }
        return true
    }

    /// Removes every entry of a database, keeping the database itself.
    func empty(_ dbi: MDB_dbi) throws(EventStoreError) {
        let rc = mdb_drop(handle, dbi, 0)
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "emptying a table") }
    }

    /// The number of entries in a database, as this transaction sees it.
    func entryCount(_ dbi: MDB_dbi) throws(EventStoreError) -> Int {
        var stat = MDB_stat()
        let rc = mdb_stat(handle, dbi, &stat)
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "reading a table's statistics") }
        return stat.ms_entries
    }

    /// Opens a cursor on a database; it closes when the returned value goes away.
    func cursor(_ dbi: MDB_dbi) throws(EventStoreError) -> Cursor {
        var cursor: OpaquePointer?
        let rc = mdb_cursor_open(handle, dbi, &cursor)
        guard rc == MDB_SUCCESS, let cursor else { throw .lmdb(rc, "opening a cursor") }
        return Cursor(handle: cursor)
    }
}

/// An LMDB cursor, closed when it goes out of scope. Like its transaction, it must not escape the
/// closure it was made in.
struct Cursor: ~Copyable {
    let handle: OpaquePointer

    deinit { mdb_cursor_close(handle) }

    /// One key and value, valid while the transaction lasts and the cursor stays put.
    typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    /// Moves the cursor and returns the entry it lands on, or nil past either end.
    func get(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws(EventStoreError) -> Entry? {
        var keyValue = MDB_val(
            mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var dataValue = MDB_val()
        let rc = mdb_cursor_get(handle, &keyValue, &dataValue, op)
        if rc == MDB_NOTFOUND { return nil }
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "moving a cursor") }
        return (
            UnsafeRawBufferPointer(start: keyValue.mv_data, count: keyValue.mv_size),
            UnsafeRawBufferPointer(start: dataValue.mv_data, count: dataValue.mv_size)
        )
    }

    /// Moves the cursor to `key` and, among its sorted duplicates, the first value at least
    /// `value` (`MDB_GET_BOTH_RANGE`, DUPSORT databases only); nil when there is none.
    func seek(key: UnsafeRawBufferPointer, atLeast value: UnsafeRawBufferPointer) throws(EventStoreError) -> Entry? {
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var dataValue = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_cursor_get(handle, &keyValue, &dataValue, MDB_GET_BOTH_RANGE)
        if rc == MDB_NOTFOUND { return nil }
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "moving a cursor") }
        return (
            UnsafeRawBufferPointer(start: keyValue.mv_data, count: keyValue.mv_size),
            UnsafeRawBufferPointer(start: dataValue.mv_data, count: dataValue.mv_size)
        )
    }

    /// How many values the key the cursor is on holds (DUPSORT databases only).
    func duplicateCount() throws(EventStoreError) -> Int {
        var count = 0
        let rc = mdb_cursor_count(handle, &count)
        guard rc == MDB_SUCCESS else { throw .lmdb(rc, "counting a key's values") }
        return count
    }

    /// The next value of the key the cursor is on (DUPSORT databases only); nil past its last.
    func nextDuplicate() throws(EventStoreError) -> Entry? { try get(MDB_NEXT_DUP) }

    /// The first entry whose key is at least `key`.
    func seek(atLeast key: UnsafeRawBufferPointer) throws(EventStoreError) -> Entry? {
        try get(MDB_SET_RANGE, key: key)
    }

    func next() throws(EventStoreError) -> Entry? { try get(MDB_NEXT) }
    func previous() throws(EventStoreError) -> Entry? { try get(MDB_PREV) }
    func first() throws(EventStoreError) -> Entry? { try get(MDB_FIRST) }
    func last() throws(EventStoreError) -> Entry? { try get(MDB_LAST) }
}
