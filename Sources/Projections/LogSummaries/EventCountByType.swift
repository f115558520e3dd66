import EventStoreCore

/// An example projection: how many events of each type the log holds.
///
/// One table, `counts`: key = the type, value = the count.
public struct EventCountByType: Projection {
    public let name = "count-by-type"
    public let version = 1
    public let tables = ["counts"]
    public let eventTypes: Set<String>? = nil
    public let errorPolicy = ProjectionErrorPolicy.stop
    public let queryParameters: [QueryParameter] = []

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        let key = RowKey(event.type)
        let count = try state.get("counts", key, as: Int.self) ?? 0
        try state.put("counts", key, count + 1)
    }

    /// `{"types": {"TYPE": COUNT, ...}, "total": N}`, types in byte order.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let rows = try await state.rows("counts", as: Int.self)
        let counts = rows.map { row in (row.key.parts([.string])?.first?.string ?? "?", JSONValue.int(row.value)) }
        return ["types": .object(counts), "total": .int(rows.reduce(0) { $0 + $1.value })]
    }
}
