/// Named tables of keys and values beside the log, read and written in transactions that also see
/// the log (and, for ``append(_:alsoWriting:)``, commit with an append). What projections and
/// consumer groups keep their state in.
public protocol LogTables: StoreHandle {
    /// Opens the named tables, creating those that do not exist yet; see ``EventStore/openTables(_:)``.
    func openTables(_ names: [String]) async throws

    /// Which of the named tables exist, without creating any.
    func existingTables(_ names: [String]) async throws -> [String]

    /// Runs `body` in one read snapshot of the tables and the log; see ``EventStore/readTables(_:)``.
    /// Synchronous, as folds are: on PostgreSQL it blocks its thread for the round trips.
    func readTables<T>(_ body: (TableTransaction) throws -> T) throws -> T

    /// Runs `body` in a write transaction of the tables, serialised with every other table write
    /// of every process; see ``EventStore/writeTables(_:)``.
    func writeTables<T: Sendable>(_ body: @escaping @Sendable (TableTransaction) throws -> T) async throws -> T

    /// Appends, and when the events are newly written runs `body` in the same transaction; see
    /// ``EventStore/append(_:alsoWriting:)``.
    func append(
        _ appends: [StreamAppend], alsoWriting body: @escaping @Sendable (TableTransaction, [AppendResult]) throws -> Void
    ) async throws -> [AppendResult]
}
