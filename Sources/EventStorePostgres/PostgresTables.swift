import EventStoreCore
import Foundation
import Logging
import PostgresNIO

/// The tables and the log seen through one PostgreSQL transaction, for ``TableTransaction``:
/// every entry is a row of `eventstore.tables` (name, key, value), read and written with
/// round trips on the transaction's connection that hold no thread while they wait.
final class PostgresTables: TableStorage {
    private let connection: PostgresConnection
    private let logger: Logger
    private let openTables: @Sendable (String) -> Bool
    private let location: String
    /// The columns event reads select (``PostgresEventStore/eventColumns``).
    private let eventColumns: String
    /// Whether the database keeps deletions' counters (schema version 4 on).
    private let hasDeletions: Bool
    /// The store's clock (``StoreConfiguration/clock``), whose offset from the system's moves the server's.
    private let clock: @Sendable () -> Date

    /// Rows fetched per round trip by scans and log walks.
    static let pageSize = 512

    init(
        connection: PostgresConnection, logger: Logger, location: String, eventColumns: String, hasDeletions: Bool,
        clock: @escaping @Sendable () -> Date, isOpen: @escaping @Sendable (String) -> Bool
    ) {
        self.hasDeletions = hasDeletions
        self.clock = clock
        self.connection = connection
        self.eventColumns = eventColumns
        self.logger = logger
        self.location = location
        self.openTables = isOpen
    }

    private func checkOpen(_ table: String) throws(EventStoreError) {
        guard openTables(table) else {
            throw EventStoreError(.notFound, "The table '\(table)' is not open; open it with openTables first.")
        }
    }

    private func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        do {
            return try await connection.rows(query, logger: logger)
        } catch {
            throw PostgresErrors.mapped(error, location: location)
        }
    }

    func releaseReadPages() {}

    /// The server's `clock_timestamp()`: one clock for the members on every host, whatever
    /// their own clocks say. Moved by the store's clock's offset from the system's, which is 0
    /// unless a clock was injected (a test's).
    func sharedClock() async throws -> Date? {
        let found = try await rows("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint")
        guard let micros = try found.first?.decode(Int64.self) else {
            throw EventStoreError(.storageFailure, "The server did not say its time (clock_timestamp()).")
        }
        // The system's time is read only to measure the injected clock's offset from it.
        let offset = clock().timeIntervalSince1970 - Date().timeIntervalSince1970
        return Date(timeIntervalSince1970: Double(micros) / 1_000_000 + offset)
    }

    var rowsAtHand: Bool { false }

    func valueAtHand(_ table: String, _ key: [UInt8]) throws -> [UInt8]?? { nil }

    func withValue<R>(_ table: String, _ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) async throws -> R? {
        try checkOpen(table)
        let found = try await rows("SELECT value FROM eventstore.tables WHERE name = \(table) AND key = \(ByteBuffer(bytes: key))")
        guard let row = found.first else { return nil }
        let value = try row.decode(ByteBuffer.self)
        return try value.withUnsafeReadableBytes { try body($0) }
    }

    func put(_ table: String, _ key: [UInt8], _ value: [UInt8]) async throws {
        try checkOpen(table)
        _ = try await rows(
            """
            INSERT INTO eventstore.tables (name, key, value) VALUES (\(table), \(ByteBuffer(bytes: key)), \(ByteBuffer(bytes: value)))
            ON CONFLICT (name, key) DO UPDATE SET value = excluded.value
            """)
    }

    func delete(_ table: String, _ key: [UInt8]) async throws -> Bool {
        try checkOpen(table)
        return try await !rows("DELETE FROM eventstore.tables WHERE name = \(table) AND key = \(ByteBuffer(bytes: key)) RETURNING 1").isEmpty
    }

    func removeAll(_ table: String) async throws {
        try checkOpen(table)
        _ = try await rows("DELETE FROM eventstore.tables WHERE name = \(table)")
    }

    func count(_ table: String) async throws -> Int {
        try checkOpen(table)
        let found = try await rows("SELECT count(*) FROM eventstore.tables WHERE name = \(table)")
        return Int(try found.first?.decode(Int64.self) ?? 0)
    }

    func scan(
        _ table: String, prefix: [UInt8], after: [UInt8]?, reverse: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) async throws {
        try checkOpen(table)
        let upper = TableTransaction.successor(of: prefix)
        var resume = after
        while true {
            var query = SQLQuery("SELECT key, value FROM eventstore.tables WHERE name = ")
            query.append(query.bind(table))
            if !prefix.isEmpty { query.append(" AND key >= \(query.bind(ByteBuffer(bytes: prefix)))") }
            if let upper { query.append(" AND key < \(query.bind(ByteBuffer(bytes: upper)))") }
            if let resume {
                query.append(" AND key \(reverse ? "<" : ">") \(query.bind(ByteBuffer(bytes: resume)))")
            }
            query.append(" ORDER BY key \(reverse ? "DESC" : "ASC") LIMIT \(Self.pageSize)")
            let page = try await rows(query.query)
            for row in page {
                let (key, value) = try row.decode((ByteBuffer, ByteBuffer).self)
                let goOn = try key.withUnsafeReadableBytes { keyBytes in
                    try value.withUnsafeReadableBytes { valueBytes in try body(keyBytes, valueBytes) }
                }
                guard goOn else { return }
                resume = Array(key.readableBytesView)
            }
            if page.count < Self.pageSize { return }
        }
    }

    func streamVersion(_ stream: String) async throws -> UInt64 {
        let found = try await rows("SELECT version FROM eventstore.streams WHERE name = \(stream)")
        return try found.first.map { UInt64(max(try $0.decode(Int64.self), 0)) } ?? 0
    }

    func deletionCount(ofType type: String?, trimsOnly: Bool) async throws -> UInt64 {
        guard hasDeletions else { return 0 }
        let found = try await rows(
            trimsOnly
                ? "SELECT trims FROM eventstore.deleted_types WHERE type = \(type ?? "")"
                : "SELECT deletions FROM eventstore.deleted_types WHERE type = \(type ?? "")")
        return try found.first.map { UInt64(max(try $0.decode(Int64.self), 0)) } ?? 0
    }

    func headPosition() async throws -> UInt64 {
        let found = try await rows("SELECT position FROM eventstore.head")
        guard let row = found.first else {
            throw EventStoreError(.damaged, "The head row of the store is missing; run `esctl verify`.")
        }
        return UInt64(max(try row.decode(Int64.self), 0))
    }

    func forEachEvent(inStream stream: String, from version: UInt64, _ body: (RecordedEvent) async throws -> Void) async throws {
        var next = Int64(clamping: version)
        while true {
            let page = try await rows(
                """
                SELECT \(unescaped: eventColumns) FROM eventstore.events WHERE stream = \(stream) AND version >= \(next)
                ORDER BY version LIMIT \(Self.pageSize)
                """)
            for row in page {
                let event = try recordedEvent(row.decode(EventRow.self))
                try await body(event)
                next = Int64(clamping: event.version) + 1
            }
            if page.count < Self.pageSize { return }
        }
    }

    /// Events come over the network: the caller reads pages (``eventPage(from:through:types:limit:)``).
    func forEachRecordAtHand(from start: UInt64, through last: UInt64, types: Set<String>?, _ body: (EventView) throws -> Bool) throws
        -> UInt64?
    { nil }

    func eventPage(from start: UInt64, through last: UInt64, types: Set<String>?, limit: Int) async throws
        -> (events: [RecordedEvent], examined: UInt64)
    {
        let start = max(start, 1)
        let end = min(last, try await headPosition())
        guard start <= end, limit > 0 else { return ([], start - 1) }
        var query = SQLQuery("SELECT \(eventColumns) FROM eventstore.events WHERE position >= ")
        query.append(query.bind(Int64(clamping: start)))
        query.append(" AND position <= \(query.bind(Int64(clamping: end)))")
        query.appendConditions(of: EventFilter(types: types))
        query.append(" ORDER BY position LIMIT \(query.bind(Int64(limit)))")
        let events = try await rows(query.query).map { try recordedEvent($0.decode(EventRow.self)) }
        guard events.count == limit, let lastEvent = events.last else { return (events, end) }
        return (events, lastEvent.position)
    }
}
