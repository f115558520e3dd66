import Foundation
import GRDB

/// What a Swift developer would pick instead: SQLite through GRDB, in WAL mode with
/// synchronous=FULL, one table with UNIQUE(stream, version).
final class SQLiteContender: Sendable {
    let queue: DatabaseQueue
    private let versions: Mutexed<[Int64]>

    init(path: String, streams: Int) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS events (
                    position INTEGER PRIMARY KEY,
                    stream TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    type TEXT NOT NULL,
                    data BLOB NOT NULL,
                    UNIQUE(stream, version))
                """)
        }
        versions = Mutexed(Array(repeating: 0, count: streams))
    }

    private func insert(_ db: Database, stream: Int, data: Data) throws {
        let version = versions.withLock { versions -> Int64 in
            versions[stream] += 1
            return versions[stream]
        }
        let statement = try db.cachedStatement(sql: "INSERT INTO events (stream, version, type, data) VALUES (?, ?, ?, ?)")
        try statement.execute(arguments: ["stream-\(stream)", version, Workload.type, data])
    }

    /// Appends events in one transaction.
    func append(_ events: [(stream: Int, data: Data)]) throws {
        try queue.write { db in
            for (stream, data) in events { try insert(db, stream: stream, data: data) }
        }
    }

    /// Appends one event in its own transaction (awaiting GRDB's writer).
    func appendOne(stream: Int, data: Data) async throws {
        try await queue.write { db in try self.insert(db, stream: stream, data: data) }
    }

    /// The bytes of the last `count` events of a stream.
    func lastEvents(stream: Int, count: Int) throws -> Int {
        try queue.read { db in
            let rows = try Row.fetchCursor(
                db.cachedStatement(sql: "SELECT position, version, data FROM events WHERE stream = ? ORDER BY version DESC LIMIT ?"),
                arguments: ["stream-\(stream)", count])
            var bytes = 0
            while let row = try rows.next() { bytes += (row[2] as Data).count }
            return bytes
        }
    }

    /// Reads every row; returns how many.
    func scan() throws -> Int {
        try queue.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT position, stream, version, type, data FROM events ORDER BY position")
            var count = 0
            while let row = try rows.next() {
                _ = row[0] as Int64
                count += 1
            }
            return count
        }
    }
}

/// A value behind a lock.
final class Mutexed<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
