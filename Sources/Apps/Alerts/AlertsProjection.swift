import EventStore
import Projections

/// Each user's alert queue: count, top, next up and the alerts in order. Query parameter:
/// `user` (default "default").
public struct AlertsProjection: Projection {
    public let name = "alerts"
    public let version = 2
    public let tables = ["queues"]
    public let eventTypes: Set<String>? = AlertEvent.types
    /// Anyone may append to an alert stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("user", "the user (default: default)")]

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let key = AppStreams.rowKey(of: event.stream, prefix: AppStreams.alertsPrefix) else { return }
        let decoded = try AlertEvent(recorded: event)
        var queue = try state.get("queues", key, as: AlertQueue.self) ?? AlertQueue()
        queue.apply(decoded)
        try state.put("queues", key, queue)
    }

    /// `{"user","count","top","nextUp","alerts":[{"name","text","severity"}]}`.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let user = parameters.value("user", default: AppStreams.defaultKey)
        return (try state.get("queues", RowKey(user), as: AlertQueue.self) ?? AlertQueue()).json(user: user)
    }
}
