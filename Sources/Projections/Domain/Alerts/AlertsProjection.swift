import EventStore

/// Each user's alert queue: count, top, next up and the alerts in order. Query parameter:
/// `user` (default "default").
public struct AlertsProjection: Projection {
    public let name = "alerts"
    public let version = 1
    public let tables = ["queues"]
    public let eventTypes: Set<String>? = AlertEvent.types
    public let queryParameters = ["user"]

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let key = DomainStreams.rowKey(of: event.stream, prefix: DomainStreams.alertsPrefix) else { return }
        var queue = try state.get("queues", key, as: AlertQueue.self) ?? AlertQueue()
        queue.apply(try AlertEvent(event))
        try state.put("queues", key, queue)
    }

    /// `{"user","count","top","nextUp","alerts":[{"name","text","severity"}]}`.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let user = parameters.value("user", default: DomainStreams.defaultKey)
        return (try state.value("queues", RowKey(user), as: AlertQueue.self) ?? AlertQueue()).json(user: user)
    }
}
