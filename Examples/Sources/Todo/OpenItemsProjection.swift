import EventStoreCore
import Projections

/// How many items are open in each list, and which: a read model over every list, rebuilt at
/// will from the log. Rows: `open` keyed by (list, item) → when it was added.
public struct OpenItemsProjection: Projection {
    public let name = "open-items"
    public let version = 1
    public let tables = ["open"]
    public let eventTypes: Set<String>? = [ItemAdded.eventType, ItemCompleted.eventType, ItemRemoved.eventType]
    public let errorPolicy = ProjectionErrorPolicy.stop
    public let queryParameters = [QueryParameter("list", "the list (default: every list)")]

    public init() {}

    /// One open item, as the table keeps it.
    public struct OpenItem: Codable, Sendable, Equatable, RowValue {
        public var addedAtMicroseconds: Int64
    }

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard event.stream.hasPrefix("todo-") else { return }
        let list = String(event.stream.dropFirst("todo-".count))
        switch try TodoEvent(recorded: event) {
        case .added(let added):
            try state.put("open", RowKey(list, added.item), OpenItem(addedAtMicroseconds: event.recordedAtMicroseconds))
        case .completed(let done):
            try state.delete("open", RowKey(list, done.item))
        case .removed(let removed):
            try state.delete("open", RowKey(list, removed.item))
        }
    }

    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let prefix = parameters["list"].map { RowKey($0) } ?? RowKey()
        let rows = try await state.rows("open", prefix: prefix, as: OpenItem.self)
        return .array(rows.compactMap { row in
            guard let (list, item) = row.key.decode(String.self, String.self) else { return nil }
            return ["list": .string(list), "item": .string(item)]
        })
    }

    /// The open items of `list`, in item order, read from a state.
    public static func openItems(of list: String, in state: some StateReader) async throws -> [String] {
        try await state.rows("open", prefix: RowKey(list), as: OpenItem.self).compactMap { $0.key.decode(String.self, String.self)?.1 }
    }
}
