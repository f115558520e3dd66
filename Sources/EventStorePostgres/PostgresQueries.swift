import EventStoreCore
import Foundation
import Logging
import PostgresNIO

extension PostgresEventStore {
    /// Appends on a condition; see `EventStore.append(_:condition:)` for the rules, which are
    /// the same. Not grouped with other appends: its transaction locks the head row first, which
    /// every append of every process takes, so the check and the write are serializable.
    public func append(_ appends: [StreamAppend], condition: AppendCondition) async throws -> [AppendResult] {
        try await append(appends, checking: condition)
    }

    /// Appends on `condition` and records `tracking` in one transaction; see
    /// `EventStore.append(_:condition:tracking:)` for the rules, which are the same.
    @discardableResult
    public func append(_ appends: [StreamAppend], condition: AppendCondition, tracking: TrackingPosition) async throws -> [AppendResult] {
        try tracking.validate()
        return try await append(appends, checking: condition, tracking: tracking)
    }

    /// Up to `limit` events after `after` that match `query`, and the head, from one statement
    /// (one snapshot); see `EventStore.read(_:after:limit:)`. Each item is a seek of
    /// `event_tags` (by its first tag) or of the events' type index.
    public func read(_ query: EventQuery, after: UInt64 = 0, limit: Int = 10_000) async throws -> QueryResult {
        guard limit >= 0 else { throw EventStoreError(.invalidInput, "The limit is negative; give 0 or more.") }
        try query.validate()
        var sql = SQLQuery("WITH h AS (SELECT position AS head FROM eventstore.head), m AS (SELECT DISTINCT position FROM (")
        ConditionCheck.appendMatches(of: query, after: after, limit: limit, hasTags: databaseSchemaVersion >= 5, to: &sql)
        sql.append(
            ") u ORDER BY position LIMIT \(sql.bind(Int64(limit)))) SELECT h.head, e.* FROM h LEFT JOIN LATERAL (SELECT \(eventColumns) FROM eventstore.events WHERE position IN (SELECT position FROM m) ORDER BY position) e ON true")
        let (head, events) = try await reading(newest: { $0.head }) { connection in try await headAndEvents(sql, connection) }
        return QueryResult(events: try upcasting.upcast(try await opened(events)), head: head)
    }
}

extension PostgresEventStore {
    /// The last event at or before `through` that matches `query`, or nil; see
    /// `EventStore.lastEvent(matching:through:)`. One backward seek per item (per type).
    public func lastEvent(matching query: EventQuery, through: UInt64 = .max) async throws -> RecordedEvent? {
        try query.validate()
        var sql = SQLQuery("SELECT \(eventColumns) FROM eventstore.events WHERE position = (SELECT max(position) FROM (")
        ConditionCheck.appendMatches(
            of: query, after: 0, limit: 1, hasTags: databaseSchemaVersion >= 5, to: &sql, through: Int64(clamping: through))
        sql.append(") u)")
        return try await events(sql).first
    }
}

/// The check of a conditional append on PostgreSQL, and the SQL that finds the events a query
/// matches.
enum ConditionCheck {
    /// Locks the head row (every append takes it: none commits until this transaction ends),
    /// then refuses the append when an event after the condition's position matches its query,
    /// unless one of the ids the append function looks up (`given`: the caller's, or every one
    /// on a retry after a failover) is recorded already: a retry, which the append function
    /// answers as recorded, or refuses, as for any append.
    static func check(_ condition: AppendCondition, lookingUp given: [UUID], _ connection: PostgresConnection, _ logger: Logger)
        async throws
    {
        do {
            let headRows = try await connection.rows("SELECT position FROM eventstore.head FOR UPDATE", logger: logger)
            let head = try headRows.first.map { try $0.decode(Int64.self) } ?? 0
            if let after = condition.after, after > UInt64(max(head, 0)) {
                throw EventStoreError.conditionBeyondHead(after, head: UInt64(max(head, 0)))
            }
            var sql = SQLQuery("SELECT position, item FROM (")
            appendMatches(of: condition.failIfEventsMatch, after: condition.after ?? 0, limit: 1, hasTags: true, to: &sql, withItem: true)
            sql.append(") u ORDER BY position, item LIMIT 1")
            let rows = try await connection.rows(sql.query, logger: logger)
            guard let row = rows.first else { return }
            let (position, item) = try row.decode((Int64, Int32).self)
            if !given.isEmpty {
                let recorded = try await connection.rows(
                    """
                    SELECT EXISTS (SELECT FROM eventstore.events WHERE id = ANY(\(given)))
                        OR EXISTS (SELECT FROM eventstore.deleted_ids WHERE id = ANY(\(given)))
                    """, logger: logger)
                if let first = recorded.first, try first.decode(Bool.self) { return }
            }
            throw EventStoreError.conditionFailed(at: UInt64(max(position, 0)), item: Int(item))
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw Appender.mapped(error)
        }
    }

    /// Appends one parenthesized `SELECT position[, item]` per item (per type, for items with
    /// types and no tags), joined by UNION ALL, each the first `limit` matches after `after` in
    /// position order. Without the tags table (`hasTags` false), items with tags match nothing.
    static func appendMatches(
        of query: EventQuery, after: UInt64, limit: Int, hasTags: Bool, to sql: inout SQLQuery, withItem: Bool = false,
        through: Int64? = nil
    ) {
        // With `through`: the last matches at or before it, newest first.
        let order = through == nil ? "" : " DESC"
        func bound(_ column: String) -> String {
            guard let through else { return "" }
            return " AND \(column) <= \(sql.bind(through))"
        }
        let afterValue = Int64(clamping: after)
        let limitValue = Int64(max(limit, 0))
        var first = true
        func open(_ index: Int) {
            if !first { sql.append(" UNION ALL ") }
            first = false
            sql.append("(SELECT e.position\(withItem ? ", \(index)::integer AS item" : "")")
        }
        for (index, item) in query.items.enumerated() {
            if let tag = item.tags.first {
                open(index)
                if hasTags {
                    sql.append(" FROM eventstore.event_tags t JOIN eventstore.events e ON e.position = t.position WHERE t.tag = ")
                    sql.append(sql.bind(tag))
                    sql.append(" AND t.position > \(sql.bind(afterValue))\(bound("t.position"))")
                    if item.tags.count > 1 { sql.append(" AND e.tags @> \(sql.bind(item.tags))") }
                    if !item.types.isEmpty { sql.append(" AND e.type = ANY(\(sql.bind(item.distinctTypes)))") }
                    sql.append(" ORDER BY t.position\(order) LIMIT \(sql.bind(limitValue)))")
                } else {
                    sql.append(" FROM eventstore.events e WHERE false)")
                }
            } else if !item.types.isEmpty {
                // One seek of the (type, position) index per type.
                for type in item.distinctTypes {
                    open(index)
                    sql.append(" FROM eventstore.events e WHERE e.type = \(sql.bind(type)) AND e.position > \(sql.bind(afterValue))\(bound("e.position"))")
                    sql.append(" ORDER BY e.position\(order) LIMIT \(sql.bind(limitValue)))")
                }
            } else {
                open(index)
                sql.append(
                    " FROM eventstore.events e WHERE e.position > \(sql.bind(afterValue))\(bound("e.position")) ORDER BY e.position\(order) LIMIT \(sql.bind(limitValue)))")
            }
        }
    }
}
