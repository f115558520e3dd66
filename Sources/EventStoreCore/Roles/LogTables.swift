/// Named tables of keys and values beside the log, read and written in transactions that also see
/// the log (and, for ``append(_:alsoWriting:)``, commit with an append). What projections and
/// consumer groups keep their state in.
///
/// Every closure is async and every operation of its ``TableTransaction`` is awaited: on
/// PostgreSQL each is a round trip that holds no thread while it waits. A closure must not wait
/// for other work of the same store (an append, a commit): a write transaction holds the tables'
/// lock (on LMDB, the writer) until it returns.
public protocol LogTables: StoreHandle {
    /// Opens the named tables, creating those that do not exist yet; see `EventStore.openTables(_:)`.
    func openTables(_ names: [String]) async throws

    /// Which of the named tables exist, without creating any.
    func existingTables(_ names: [String]) async throws -> [String]

    /// Runs `body` in one read snapshot of the tables and the log; see `EventStore.readTables(_:)`.
    /// The caller's own errors come back as they were thrown.
    func readTables<T: Sendable>(_ body: (TableTransaction) async throws -> T) async throws -> T

    /// Runs `body` in a write transaction of the tables, serialised with every other table write
    /// of every process; see `EventStore.writeTables(_:)`.
    func writeTables<T: Sendable>(_ body: @escaping @Sendable (TableTransaction) async throws -> T) async throws -> T

    /// Appends, and when the events are newly written runs `body` in the same transaction; see
    /// `EventStore.append(_:alsoWriting:)`.
    func append(
        _ appends: [StreamAppend], alsoWriting body: @escaping @Sendable (TableTransaction, [AppendResult]) async throws -> Void
    ) async throws -> [AppendResult]
}
