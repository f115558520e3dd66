import EventStoreCore

/// A page of a query's list, as asked with the query parameters `limit`, `after` and `before`
/// (``Page/parameters``): at most `limit` items, those after the cursor `after` or before the
/// cursor `before` in the list's order. A projection whose query returns a list declares these
/// parameters, reads its rows with ``StateReader/page(_:prefix:_:startFromEnd:cursorKey:as:where:)``,
/// and prints the cursor of the next page (`next`, or null at the end).
public struct Page: Sendable, Equatable {
    /// At most this many items (1 to ``maximumLimit``).
    public let limit: Int
    /// Items after this cursor (the list's natural order key: a position, an id, a number).
    public let after: String?
    /// Items before this cursor.
    public let before: String?

    /// The largest page.
    public static let maximumLimit = 10_000

    /// The paging parameters, for ``Projection/queryParameters``.
    public static let parameters = [
        QueryParameter("limit", "at most this many items, with the cursor of the next page in \"next\""),
        QueryParameter("after", "with --limit: the items after this cursor (a \"next\" of an earlier page)"),
        QueryParameter("before", "with --limit: the items before this cursor"),
    ]

    public init(limit: Int, after: String? = nil, before: String? = nil) {
        self.limit = limit
        self.after = after
        self.before = before
    }

    /// The page the parameters ask for; nil when they give no `limit` (the whole list).
    ///
    /// Throws ``ProjectionError/Code/invalidQuery`` for a limit that is not a number from 1 to
    /// ``maximumLimit``, a cursor without a limit, or both cursors at once.
    public init?(_ parameters: QueryParameters, projection: String) throws(ProjectionError) {
        func refuse(_ problem: String) -> ProjectionError {
            ProjectionError(.invalidQuery, "\(problem) (the projection '\(projection)').", projection: projection)
        }
        guard let text = parameters["limit"] else {
            if parameters["after"] != nil || parameters["before"] != nil {
                throw refuse("A cursor (after, before) pages a list: give a limit with it")
            }
            return nil
        }
        guard let limit = Int(text), (1...Self.maximumLimit).contains(limit) else {
            throw refuse("The limit takes a whole number from 1 to \(Self.maximumLimit); '\(text)' is not one")
        }
        if parameters["after"] != nil && parameters["before"] != nil {
            throw refuse("Give one cursor, after or before, not both")
        }
        self.init(limit: limit, after: parameters["after"], before: parameters["before"])
    }

    /// Whether this page is read backwards: before a cursor, or from the end of the list.
    func isBackward(startFromEnd: Bool) -> Bool { before != nil || (after == nil && startFromEnd) }
}

/// The rows of a page, in the list's order, and whether more remain in the direction it was read.
public struct PageRows<V: RowValue> {
    /// The rows, in key order.
    public let rows: [(key: RowKey, value: V)]
    /// Whether more rows follow in the direction the page was read.
    public let hasMore: Bool
    /// Whether the page was read backwards (before a cursor, or from the end): its next page is
    /// then before its first row.
    public let isBackward: Bool

    /// The row the next page continues from (the last row read forwards, the first backwards);
    /// nil at the end of the list.
    public var continuation: (key: RowKey, value: V)? {
        guard hasMore else { return nil }
        return isBackward ? rows.first : rows.last
    }
}

extension StateReader {
    /// Reads one page of a table's rows whose keys start with `prefix`, keeping those `include`
    /// accepts: forwards after the `after` cursor (or from the start), backwards before the
    /// `before` cursor (or, with `startFromEnd`, from the end), at most the page's limit, and
    /// always in key order. Reads at most one row more than it keeps, never the whole table.
    ///
    /// `cursorKey` turns a cursor into the row key it stands for; a cursor it cannot read is
    /// ``ProjectionError/Code/invalidQuery``.
    public func page<V: RowValue>(
        _ table: String, prefix: RowKey, _ page: Page, startFromEnd: Bool = false, cursorKey: (String) -> RowKey?,
        as type: V.Type, where include: (RowKey, V) throws -> Bool = { _, _ in true }
    ) async throws -> PageRows<V> {
        let backward = page.isBackward(startFromEnd: startFromEnd)
        var start: RowKey?
        if let cursor = page.after ?? page.before {
            guard let key = cursorKey(cursor) else {
                throw ProjectionError(.invalidQuery, "The cursor '\(cursor)' is not one of this list's; give a \"next\" of an earlier page.")
            }
            start = key
        }
        var rows: [(key: RowKey, value: V)] = []
        var hasMore = false
        try await forEachRow(table, prefix: prefix, after: start, reverse: backward, as: type) { key, value in
            guard try include(key, value) else { return true }
            if rows.count == page.limit {
                hasMore = true
                return false
            }
            rows.append((key, value))
            return true
        }
        if backward { rows.reverse() }
        return PageRows(rows: rows, hasMore: hasMore, isBackward: backward)
    }
}
