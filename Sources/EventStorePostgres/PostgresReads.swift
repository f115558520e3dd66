import EventStoreCore
import Foundation
import PostgresNIO

/// What reads an event's schema version in a database of schema `version`: one from before
/// schema versions (read-only handles do not upgrade it) has no such column, and every event in
/// it is version 1.
func schemaVersionExpression(_ version: Int) -> String {
    version >= 3 ? "schema_version" : "1"
}

/// The columns every read selects, in the order ``EventRow`` decodes them, in a database of
/// schema `version`.
func eventColumns(schemaVersion version: Int) -> String {
    "position, stream, version, id, type, recorded_at, data, metadata, \(schemaVersionExpression(version)) AS schema_version, "
        + "\(tagsExpression(version)) AS tags, \(binaryDataExpression(version)) AS binary_data"
}

/// What reads whether an event's data is binary in a database of schema `version`: none was
/// before version 6.
func binaryDataExpression(_ version: Int) -> String {
    version >= 6 ? "binary_data" : "false"
}

/// What reads an event's tags in a database of schema `version`: none before version 5.
func tagsExpression(_ version: Int) -> String {
    version >= 5 ? "coalesce(tags, '{}'::text[])" : "'{}'::text[]"
}

/// One row of `eventstore.events`, as read.
typealias EventRow = (Int64, String, Int64, UUID, String, Int64, ByteBuffer, ByteBuffer, Int32, [String], Bool)

func recordedEvent(_ row: EventRow) -> RecordedEvent {
    RecordedEvent(
        position: UInt64(max(row.0, 0)), stream: row.1, version: UInt64(max(row.2, 0)), id: row.3, type: row.4,
        data: Data(row.6.readableBytesView), metadata: Data(row.7.readableBytesView), recordedAtMicroseconds: row.5,
        schemaVersion: UInt16(clamping: max(row.8, 1)), tags: row.9, dataFormat: row.10 ? .binary : .json)
}

/// A query under construction whose values are bound as parameters ($1, $2, ...), never spliced.
struct SQLQuery {
    private(set) var sql: String
    private(set) var bindings = PostgresBindings()

    init(_ sql: String) {
        self.sql = sql
    }

    /// Binds `value` and returns its placeholder.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        bindings.append(value)
        return "$\(bindings.count)"
    }

    mutating func append(_ text: String) {
        sql += text
    }

    /// The conditions of `filter` on the events table, each starting with AND.
    mutating func appendConditions(of filter: EventFilter) {
        if let stream = filter.stream { append(" AND stream = \(bind(stream))") }
        if let category = filter.category {
            // A category never holds a '-': such a filter matches no stream.
            if category.contains("-") { append(" AND false") } else { append(" AND category = \(bind(category))") }
        }
        if let prefix = filter.streamPrefix { append(" AND starts_with(stream, \(bind(prefix)))") }
        if let types = filter.types { append(" AND type = ANY(\(bind(Array(types).sorted())))") }
    }

    var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: bindings) }
}

extension PostgresEventStore: StreamPageReads {
    /// Reads up to `limit` events of the whole log that pass `filter`, from `position` through
    /// `last` (both inclusive), in position order, in one snapshot (several, when upcasters
    /// renamed rows away from the types wanted); see `EventStore.read(from:through:limit:filter:)`.
    public func read(
        from position: UInt64 = 1, through last: UInt64 = .max, limit: Int, filter: EventFilter = .all
    ) async throws -> [RecordedEvent] {
        guard limit >= 0 else { throw EventStoreError(.invalidInput, "The limit is negative; give 0 or more.") }
        guard limit > 0, position <= last else { return [] }
        let recorded = upcasting.recordedFilter(filter)
        var events: [RecordedEvent] = []
        var next = max(position, 1)
        // One statement, unless an upcaster renamed some of the rows it gave away from the types
        // wanted: then the page is filled from the rows after them, a whole page at a time (each
        // statement its own snapshot, in which the rows before `next` are as the first saw them).
        while true {
            var query = SQLQuery("SELECT \(eventColumns) FROM eventstore.events WHERE position >= ")
            query.append(query.bind(Int64(clamping: next)))
            query.append(" AND position <= \(query.bind(Int64(clamping: last)))")
            query.appendConditions(of: recorded)
            query.append(" ORDER BY position LIMIT \(query.bind(Int64(limit)))")
            let rows = try await storedEvents(query)
            events += try upcasting.upcast(try await opened(rows), wanting: filter.types)
            if events.count >= limit { return Array(events.prefix(limit)) }
            guard rows.count == limit, let lastRow = rows.last, lastRow.position < last else { return events }
            next = lastRow.position + 1
        }
    }

    /// Reads up to `limit` events of `stream` from version `version` in `direction`; see
    /// `EventStore.readStream(_:from:direction:limit:)`.
    public func readStream(
        _ stream: String, from version: UInt64? = nil, direction: ReadDirection = .forward, limit: Int = .max
    ) async throws -> [RecordedEvent] {
        guard limit >= 0 else { throw EventStoreError(.invalidInput, "The limit is negative; give 0 or more.") }
        guard limit > 0 else { return [] }
        var query = SQLQuery("SELECT \(eventColumns) FROM eventstore.events WHERE stream = ")
        query.append(query.bind(stream))
        switch direction {
        case .forward:
            query.append(" AND version >= \(query.bind(Int64(clamping: version ?? 1))) ORDER BY version")
        case .backward:
            if let version { query.append(" AND version <= \(query.bind(Int64(clamping: version)))") }
            query.append(" ORDER BY version DESC")
        }
        query.append(" LIMIT \(query.bind(Int64(limit)))")
        return try await events(query)
    }

    /// Up to `limit` events of `stream`, no more stored bytes than `byteLimit` after the first
    /// (see ``StreamPageReads``): the sizes are summed in the query, as a subscription page's are.
    package func readStream(_ stream: String, from version: UInt64?, direction: ReadDirection, limit: Int, byteLimit: Int) async throws
        -> [RecordedEvent]
    {
        guard limit >= 0 else { throw EventStoreError(.invalidInput, "The limit is negative; give 0 or more.") }
        guard limit > 0 else { return [] }
        let order = direction == .forward ? "version" : "version DESC"
        var query = SQLQuery(
            "SELECT \(Self.pageColumns) FROM (SELECT \(eventColumns), "
                + "sum(octet_length(data) + octet_length(metadata)) OVER (ORDER BY \(order)) AS page_bytes, "
                + "octet_length(data) + octet_length(metadata) AS event_bytes, row_number() OVER (ORDER BY \(order)) AS page_row "
                + "FROM eventstore.events WHERE stream = ")
        query.append(query.bind(stream))
        switch direction {
        case .forward:
            query.append(" AND version >= \(query.bind(Int64(clamping: version ?? 1)))")
        case .backward:
            if let version { query.append(" AND version <= \(query.bind(Int64(clamping: version)))") }
        }
        query.append(" ORDER BY \(order) LIMIT \(query.bind(Int64(limit)))) p")
        query.append(" WHERE p.page_row <= 2 OR p.page_bytes - p.event_bytes <= \(query.bind(Int64(clamping: byteLimit))) ORDER BY \(order)")
        let stored = try await reading(newest: Self.newestPosition) { connection in
            let rows = try await connection.statement(query.query, logger: configuration.logger)
            var events: [RecordedEvent] = []
            var bytes = 0
            var full = false
            for try await row in rows.decode(EventRow.self) {
                let event = recordedEvent(row)
                let size = event.data.count + event.metadata.count
                // The database sends the first event that does not fit, to say where it stopped;
                // the rows are read to their end all the same, as the connection expects.
                if full || (!events.isEmpty && size > byteLimit - bytes) {
                    full = true
                    continue
                }
                bytes += size
                events.append(event)
            }
            return events
        }
        return try upcasting.upcast(try await opened(stored))
    }

    /// The event at `position`, or nil when there is none.
    public func event(at position: UInt64) async throws -> RecordedEvent? {
        var query = SQLQuery("SELECT \(eventColumns) FROM eventstore.events WHERE position = ")
        query.append(query.bind(Int64(clamping: position)))
        return try await events(query).first
    }

    /// The event recorded with `id`, or nil when no event has it.
    public func event(withID id: UUID) async throws -> RecordedEvent? {
        var query = SQLQuery("SELECT \(eventColumns) FROM eventstore.events WHERE id = ")
        query.append(query.bind(id))
        return try await events(query).first
    }

    /// The position of the last event in the log; 0 when the log is empty.
    public func headPosition() async throws -> UInt64 {
        try await reading(newest: { $0 }) { connection in try await Self.readHead(connection, logger: configuration.logger) }
    }

    /// The version of `stream`'s last event; 0 when the stream has no events.
    public func streamVersion(_ stream: String) async throws -> UInt64 {
        try await reading { connection in
            let rows = try await connection.statement("SELECT version FROM eventstore.streams WHERE name = \(stream)", logger: configuration.logger)
            for try await version in rows.decode(Int64.self) { return UInt64(max(version, 0)) }
            return 0
        }
    }

    /// The last position `name` has recorded as handled; 0 when it has recorded none. Throws
    /// `EventStoreError.Code.invalidInput` for a bad name.
    public func trackingPosition(of name: String) async throws -> UInt64 {
        try Limits.validateName(name, kind: "processor")
        return try await reading { connection in
            let rows = try await connection.statement("SELECT position FROM eventstore.tracking WHERE name = \(name)", logger: configuration.logger)
            for try await position in rows.decode(Int64.self) { return UInt64(max(position, 0)) }
            return 0
        }
    }

    /// Counts from the head row (the head less the deleted events is the count), the first
    /// position from the index, and the database's size on disk as `fileSize`. A PostgreSQL
    /// store has no map and no reader table: `mapSize`, `readers` and `readerProcesses` are 0 and
    /// empty; `pageSize` is PostgreSQL's block size.
    public func statistics() async throws -> StoreStatistics {
        let deleted = databaseSchemaVersion >= 4 ? "h.deleted" : "0::bigint"
        return try await reading { connection in
            let rows = try await connection.statement(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT h.position, h.streams, \(deleted), coalesce((SELECT min(position) FROM eventstore.events), 0),
                            pg_database_size(current_database()), current_setting('block_size')::bigint
                        FROM eventstore.head h
                        """), logger: configuration.logger)
            for try await (head, streams, deleted, first, size, block) in rows.decode((Int64, Int64, Int64, Int64, Int64, Int64).self) {
                let head = UInt64(max(head, 0))
                return StoreStatistics(
                    eventCount: head - min(UInt64(max(deleted, 0)), head), streamCount: UInt64(max(streams, 0)),
                    firstPosition: UInt64(max(first, 0)), headPosition: head,
                    fileSize: Int(size), mapSize: 0, pageSize: Int(block), readers: 0, readerProcesses: [])
            }
            throw EventStoreError(.damaged, "The head row of the store is missing; run `esctl verify`.")
        }
    }

    /// The events from `position` through `last` that pass `filter`, read lazily, `pageSize`
    /// (at least 1) at a time, each page one statement; see `LogEvents`.
    public func events(
        from position: UInt64 = 1, through last: UInt64 = .max, filter: EventFilter = .all, pageSize: Int = 256
    ) -> LogEvents {
        LogEvents(
            first: position, last: last, pageSize: pageSize, head: { [self] in try await headPosition() },
            readPage: { [self] from, through, limit in
                try await readPage(from: from, through: through, limit: limit, scanLimit: limit * 16, filter: filter)
            })
    }

    // MARK: SubscriptionSource

    /// One page of a subscription, from one snapshot: the matching events among positions
    /// `position` ... `position + scanLimit - 1`, never past the head visible in that snapshot.
    package func readPage(from position: UInt64, limit: Int, byteLimit: Int, scanLimit: Int, filter: EventFilter) async throws
        -> (events: [RecordedEvent], scannedThrough: UInt64)
    {
        try await readPage(from: position, through: .max, limit: limit, byteLimit: byteLimit, scanLimit: scanLimit, filter: filter)
    }

    /// One page from one snapshot, ending at `through` at the latest, holding no more stored bytes
    /// (data and metadata) than `byteLimit` after its first event.
    package func readPage(
        from position: UInt64, through end: UInt64, limit: Int, byteLimit: Int = .max, scanLimit: Int, filter: EventFilter
    ) async throws -> (events: [RecordedEvent], scannedThrough: UInt64) {
        let position = max(position, 1)
        let upper = position.addingReportingOverflow(UInt64(max(scanLimit, 1)) - 1)
        let last = min(upper.overflow ? UInt64(Int64.max) : min(upper.partialValue, UInt64(Int64.max)), end)
        // The running size is summed in the database, so rows past the byte limit never leave it:
        // it sends every row that fits and the first that does not (the second row, or the
        // first that starts at or before the limit), which is dropped below and says the page
        // was cut there.
        var query = SQLQuery(
            "WITH h AS (SELECT position AS head FROM eventstore.head) SELECT h.head, e.* FROM h LEFT JOIN LATERAL ("
                + "SELECT \(Self.pageColumns) FROM (SELECT \(eventColumns), "
                + "sum(octet_length(data) + octet_length(metadata)) OVER (ORDER BY position) AS page_bytes, "
                + "octet_length(data) + octet_length(metadata) AS event_bytes, row_number() OVER (ORDER BY position) AS page_row "
                + "FROM eventstore.events WHERE position >= ")
        query.append(query.bind(Int64(clamping: position)))
        query.append(" AND position <= LEAST(h.head, \(query.bind(Int64(clamping: last))))")
        query.appendConditions(of: upcasting.recordedFilter(filter))
        query.append(" ORDER BY position LIMIT \(query.bind(Int64(max(limit, 1))))) p")
        query.append(" WHERE p.page_row <= 2 OR p.page_bytes - p.event_bytes <= \(query.bind(Int64(clamping: byteLimit))) ORDER BY position) e ON true")
        // Opened after the connection is given back: opening reads the key table on a connection
        // of its own, and none is leased while one is held.
        let (stored, scannedThrough, _) = try await reading(newest: { $0.2 }) { connection in
            var (head, events) = try await headAndEvents(query, connection)
            var pageBytes = 0
            var cut = false
            for (index, event) in events.enumerated() {
                let size = event.data.count + event.metadata.count
                if index > 0, size > byteLimit - pageBytes {
                    events.removeSubrange(index...)
                    cut = true
                    break
                }
                pageBytes += size
            }
            let scannedThrough: UInt64
            if events.count >= limit || cut, let lastEvent = events.last {
                scannedThrough = lastEvent.position
            } else {
                scannedThrough = max(min(last, head), position - 1)
            }
            return (events, scannedThrough, head)
        }
        return (try upcasting.upcast(try await opened(stored), wanting: filter.types), scannedThrough)
    }

    /// The columns a page's outer query hands on: ``eventColumns(schemaVersion:)``'s names,
    /// without the running sizes it is cut by.
    static let pageColumns = "position, stream, version, id, type, recorded_at, data, metadata, schema_version, tags, binary_data"

    /// The rows of `SELECT h.head, e.* FROM h LEFT JOIN LATERAL (events) e ON true`: the head,
    /// and the events as stored (none when the lateral query matched nothing).
    func headAndEvents(_ query: SQLQuery, _ connection: PostgresConnection) async throws -> (head: UInt64, events: [RecordedEvent]) {
        let rows = try await connection.statement(query.query, logger: configuration.logger)
        var events: [RecordedEvent] = []
        var head: UInt64 = 0
        for try await row in rows.decode(
            (Int64, Int64?, String?, Int64?, UUID?, String?, Int64?, ByteBuffer?, ByteBuffer?, Int32?, [String]?, Bool?).self)
        {
            head = UInt64(max(row.0, 0))
            if let position = row.1, let stream = row.2, let version = row.3, let id = row.4, let type = row.5,
                let recordedAt = row.6, let data = row.7, let metadata = row.8, let schemaVersion = row.9
            {
                events.append(
                    recordedEvent((position, stream, version, id, type, recordedAt, data, metadata, schemaVersion, row.10 ?? [], row.11 ?? false)))
            }
        }
        return (head, events)
    }

    /// The events a query selects, upcast.
    func events(_ query: SQLQuery) async throws -> [RecordedEvent] {
        try upcasting.upcast(try await opened(try await storedEvents(query)))
    }

    /// The events as readers see them: personal data decrypted with the keys of one read of the
    /// key table (only when some event has any), or marked forgotten.
    func opened(_ events: [RecordedEvent]) async throws -> [RecordedEvent] {
        guard events.contains(where: { PersonalEnvelope.isSealed($0.data) }), !SystemWrites.readsSealed else { return events }
        return try await readTables { txn in
            var opened: [RecordedEvent] = []
            opened.reserveCapacity(events.count)
            for event in events { opened.append(try await txn.opened(event)) }
            return opened
        }
    }

    /// The newest position among `events` (0 for none), whatever their order.
    static func newestPosition(_ events: [RecordedEvent]) -> UInt64 {
        events.lazy.map(\.position).max() ?? 0
    }

    /// The events a query selects, as stored.
    private func storedEvents(_ query: SQLQuery) async throws -> [RecordedEvent] {
        try await reading(newest: Self.newestPosition) { connection in
            let rows = try await connection.statement(query.query, logger: configuration.logger)
            var events: [RecordedEvent] = []
            for try await row in rows.decode(EventRow.self) { events.append(recordedEvent(row)) }
            return events
        }
    }
}
