import EventStore
import Hummingbird
import Projections

extension Server {
    /// What the console shows of any projection, knowing none of its types:
    ///
    /// - `GET /projections/{name}/about`: `{"name","version","tables":[{"name"}],
    ///   "queryParameters":[{"name","help"}]}`. No row counts: on PostgreSQL a count reads the
    ///   whole table, and this answer must cost the same however large the tables grow.
    /// - `GET /projections/{name}/tables/{table}?limit=N&after=KEY`: a page of the table's rows
    ///   in key order, `{"rows":[{"key","keyText","bytes","value","valueText"}],"next"}`: the key
    ///   and the value in hexadecimal (the value's first ``TableRows/shownValueBytes`` bytes;
    ///   `bytes` is its whole size), each also as text (``TableRows/text(_:)``), and the key to
    ///   give as `after` for the next page (null at the end). `limit` is 1 to 1,000 (default 50).
    func addProjectionTableRoutes(to router: Router<ServerContext>) {
        router.get("/projections/{name}/about") { request, context -> Response in
            let projection = try self.runner.projection(named: try context.pathParameter("name"))
            _ = try RequestQuery(request, known: [])
            let about: JSONValue = [
                "name": .string(projection.name),
                "version": .int(projection.version),
                "tables": .array(projection.tables.map { ["name": .string($0)] }),
                "queryParameters": .array(projection.queryParameters.map { ["name": .string($0.name), "help": .string($0.help)] }),
            ]
            return ErrorResponses.body(.ok, about.serialized)
        }

        router.get("/projections/{name}/tables/{table}") { request, context -> Response in
            let projection = try self.runner.projection(named: try context.pathParameter("name"))
            let table = try context.pathParameter("table")
            guard projection.tables.contains(table) else {
                throw ServerError(
                    .notFound, "The projection '\(projection.name)' has no table '\(table.prefix(100))'; its tables are \(projection.tables.joined(separator: ", ")).")
            }
            let query = try RequestQuery(request, known: ["limit", "after"])
            let limit = try query.whole("limit", in: 1...TableRows.maximumLimit) ?? TableRows.defaultLimit
            let after = try query.value("after").map { text throws(ServerError) in
                guard text.utf8.count <= TableRows.maximumKeyBytes * 2, let bytes = TableRows.bytes(hex: text) else {
                    throw ServerError(.badRequest, "The query parameter 'after' must be a row's key in hexadecimal (a \"next\" of an earlier page).")
                }
                return RowKey(bytes: bytes)
            }
            let rows = try await self.runner.read(projection.name) { state in
                var rows: [TableRows.Row] = []
                // Only the part of each value a page shows is copied: a table of large rows costs
                // a page's worth of memory, not the rows'.
                try await state.forEachRawRow(table, after: after) { key, value in
                    rows.append(TableRows.Row(key: Array(key), value: Array(value.prefix(TableRows.shownValueBytes)), bytes: value.count))
                    return rows.count <= limit
                }
                return rows
            }
            return ErrorResponses.body(.ok, TableRows.page(rows, limit: limit).serialized)
        }
    }
}

/// A page of a projection's table as the console shows it.
enum TableRows {
    static let defaultLimit = 50
    static let maximumLimit = 1000
    /// The longest key `after` may give (LMDB's keys are at most 511 bytes).
    static let maximumKeyBytes = 511
    /// How much of each value a page carries and holds: a page of 1,000 rows stays within
    /// about 2 MiB of memory and about 4 MiB of JSON, however large the rows.
    static let shownValueBytes = 1024

    struct Row: Sendable {
        let key: [UInt8]
        /// The value's first ``shownValueBytes`` bytes.
        let value: [UInt8]
        /// The value's whole size.
        let bytes: Int
    }

    /// `{"rows":[...],"next"}` of the first `limit` of `rows` (one more was read to know whether
    /// a next page exists).
    static func page(_ rows: [Row], limit: Int) -> JSONValue {
        let shown = rows.prefix(limit)
        let items: [JSONValue] = shown.map { row in
            [
                "key": .string(hex(row.key)), "keyText": .string(text(row.key)),
                "bytes": .int(row.bytes), "value": .string(hex(row.value)), "valueText": .string(text(row.value)),
            ]
        }
        let next: JSONValue = rows.count > limit ? shown.last.map { .string(hex($0.key)) } ?? .null : .null
        return ["rows": .array(items), "next": next]
    }

    static func hex(_ bytes: some Collection<UInt8>) -> String {
        SHA256.hexString(Array(bytes))
    }

    /// The bytes of even-length hexadecimal text; nil for anything else.
    static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(of: digits[index]), let low = value(of: digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The bytes as a reader can skim them: each run of printable UTF-8 text as it is, each run
    /// of other bytes (lengths, numbers, markers) as one `·`. Rows are binary (``RowWriter``),
    /// so this shows their strings, not their numbers; the hexadecimal has everything.
    static func text(_ bytes: some Collection<UInt8>) -> String {
        var shown = ""
        var inGap = false
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        decoding: while true {
            switch decoder.decode(&iterator) {
            case let .scalarValue(scalar):
                if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
                    if !inGap { shown.append("·") }
                    inGap = true
                } else {
                    shown.unicodeScalars.append(scalar)
                    inGap = false
                }
            case .error:
                if !inGap { shown.append("·") }
                inGap = true
            case .emptyInput:
                break decoding
            }
        }
        return shown
    }
}
