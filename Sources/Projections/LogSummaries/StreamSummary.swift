import EventStoreCore

/// An example projection: per stream, how many events it has, and the first and last position
/// and time. The `category` query parameter narrows it to the streams of a category (the part of
/// the name before the first `-`; a trailing `-` is ignored).
public struct StreamSummary: Projection {
    public let name = "stream-summary"
    public let version = 1
    public let tables = ["streams"]
    public let eventTypes: Set<String>? = nil
    public let errorPolicy = ProjectionErrorPolicy.stop
    public let queryParameters =
        [QueryParameter("category", "only the streams of this category (the name before its first '-')")] + Page.parameters

    public init() {}

    /// One stream's summary row.
    public struct Summary: Codable, RowValue, Equatable {
        public var events: Int
        public var firstPosition: UInt64
        public var lastPosition: UInt64
        public var lastType: String
        /// Microseconds since 1970, from the last event's recorded time.
        public var lastRecordedAt: Int64

        public init(events: Int, firstPosition: UInt64, lastPosition: UInt64, lastType: String, lastRecordedAt: Int64) {
            self.events = events
            self.firstPosition = firstPosition
            self.lastPosition = lastPosition
            self.lastType = lastType
            self.lastRecordedAt = lastRecordedAt
        }
    }

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        let key = RowKey(event.stream)
        var summary = try state.get("streams", key, as: Summary.self)
            ?? Summary(events: 0, firstPosition: event.position, lastPosition: 0, lastType: "", lastRecordedAt: 0)
        summary.events += 1
        summary.lastPosition = event.position
        summary.lastType = event.type
        summary.lastRecordedAt = event.recordedAtMicroseconds
        try state.put("streams", key, summary)
    }

    /// `{"streams": [{"stream", "events", "firstPosition", "lastPosition", "lastType", "lastRecordedAt"}]}`,
    /// in stream-name order; with `limit` (and a stream name as the cursor), `"next"` beside it.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let category = parameters["category"].map { EventFilter(category: $0) }
        let include = { (key: RowKey, _: Summary) -> Bool in
            guard let category else { return true }
            return key.decode(String.self).map { category.matches(stream: $0) } ?? false
        }
        func json(_ key: RowKey, _ summary: Summary) -> JSONValue {
            [
                "stream": .string(key.decode(String.self) ?? "?"), "events": .int(summary.events),
                "firstPosition": .uint(summary.firstPosition), "lastPosition": .uint(summary.lastPosition),
                "lastType": .string(summary.lastType), "lastRecordedAt": .string(ISO8601.string(microseconds: summary.lastRecordedAt)),
            ]
        }
        if let page = try Page(parameters, projection: name) {
            let rows = try await state.page("streams", prefix: RowKey(), page, cursorKey: { RowKey($0) }, as: Summary.self, where: include)
            return [
                "streams": .array(rows.rows.map { json($0.key, $0.value) }),
                "next": rows.continuation.flatMap { $0.key.decode(String.self) }.map { .string($0) } ?? .null,
            ]
        }
        var streams: [JSONValue] = []
        try await state.forEachRow("streams", prefix: RowKey(), after: nil, reverse: false, as: Summary.self) { key, summary in
            if include(key, summary) { streams.append(json(key, summary)) }
            return true
        }
        return ["streams": .array(streams)]
    }
}
