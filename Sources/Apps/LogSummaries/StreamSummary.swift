import EventStore
import Projections

/// An example projection: per stream, how many events it has, and the first and last position
/// and time. The `category` query parameter narrows it to the streams of a category (the part of
/// the name before the first `-`; a trailing `-` is ignored).
public struct StreamSummary: Projection {
    public let name = "stream-summary"
    public let version = 1
    public let tables = ["streams"]
    public let eventTypes: Set<String>? = nil
    public let errorPolicy = ProjectionErrorPolicy.stop
    public let queryParameters = [QueryParameter("category", "only the streams of this category (the name before its first '-')")]

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

    /// `{"streams": [{"stream", "events", "firstPosition", "lastPosition", "lastType", "lastRecordedAt"}]}`.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let rows = try state.rows("streams", as: Summary.self)
        let streams: [JSONValue] = rows.compactMap { row in
            let stream = row.key.parts([.string])?.first?.string ?? "?"
            if let category = parameters["category"].map({ EventFilter(category: $0) }), !category.matches(stream: stream) { return nil }
            return [
                "stream": .string(stream), "events": .int(row.value.events),
                "firstPosition": .uint(row.value.firstPosition), "lastPosition": .uint(row.value.lastPosition),
                "lastType": .string(row.value.lastType),
                "lastRecordedAt": .string(ISO8601.string(microseconds: row.value.lastRecordedAt)),
            ]
        }
        return ["streams": .array(streams)]
    }
}
