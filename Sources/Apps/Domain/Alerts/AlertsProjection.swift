import EventStoreCore
import Projections

/// Each user's alert queue: count, top, next up and the alerts in order. Query parameter:
/// `user` (default "default").
///
/// A ``TypedProjection``: its events are decoded by hand from their bytes (``AlertEvent``'s
/// `init(view:)`).
public struct AlertsProjection: TypedProjection {
    public let name = "alerts"
    public let version = 3
    public let tables = ["queues"]
    /// Its apps' events, and deletions: a deleted stream's row goes with it.
    public let eventTypes: Set<String>? = AlertEvent.types.union([StreamDeletion.eventType])
    /// Anyone may append to an alert stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("user", "the user (default: default)")] + Page.parameters

    public init() {}

    /// What an event does to the queues.
    public typealias Change = StreamRowChange<AlertEvent>

    public func decode(_ event: EventView) throws -> Change? {
        try StreamRows.change(event, prefix: AppStreams.alertsPrefix, as: AlertEvent.self)
    }

    public func apply(_ change: Change, to state: inout ProjectionState) throws {
        try StreamRows.apply(change, table: "queues", to: &state, empty: AlertQueue()) { $0.apply($1) }
    }

    /// `{"user","count","top","nextUp","alerts":[{"name","text","severity"}]}`; with `limit`, a page
    /// of `alerts` and `"next"` beside it (the cursor is how many alerts of the queue come before).
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let user = parameters.value("user", default: AppStreams.defaultKey)
        let queue = try await state.get("queues", RowKey(user), as: AlertQueue.self) ?? AlertQueue()
        guard let page = try Page(parameters, projection: name) else { return queue.json(user: user) }
        // A user's queue is one row (its alerts, each text once): a page is a slice of it.
        let count = queue.alerts.count
        guard let cursor = page.after ?? page.before else { return queue.json(user: user, slice: 0..<min(page.limit, count)) }
        guard let offset = Int(cursor), (0...count).contains(offset) else {
            throw ProjectionError(.invalidQuery, "The cursor '\(cursor)' is not one of this list's; give a \"next\" of an earlier page.", projection: name)
        }
        if page.after != nil {
            return queue.json(user: user, slice: offset..<min(offset + page.limit, count))
        }
        return queue.json(user: user, slice: max(0, offset - page.limit)..<offset, backward: true)
    }
}
