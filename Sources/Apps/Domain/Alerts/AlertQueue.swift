import EventStoreCore
import Projections
/// A user's alert center: alerts in the order posted, each text at most once. The fold of
/// their alert stream.
public struct AlertQueue: Sendable, Equatable, Codable, RowValue {
    public private(set) var alerts: [Alert] = []

    public init(alerts: [Alert] = []) {
        self.alerts = alerts
    }

    /// How many alerts are queued.
    public var count: Int { alerts.count }
    /// The first alert.
    public var top: Alert? { alerts.first }
    /// The second alert.
    public var nextUp: Alert? { alerts.count > 1 ? alerts[1] : nil }

    /// Whether an alert with this text is queued (two alerts are the same when their texts are).
    public func contains(text: String) -> Bool { alerts.contains { $0.text == text } }

    /// Folds one event in.
    public mutating func apply(_ event: AlertEvent) {
        switch event {
        case let .posted(event):
            if !contains(text: event.alert.text) { alerts.append(event.alert) }
        case let .cleared(event):
            alerts.removeAll { $0.text == event.text }
        case .allCleared:
            alerts.removeAll()
        }
    }

    /// `{"user","count","top","nextUp","alerts":[{"name","text","severity"}]}`.
    public func json(user: String) -> JSONValue {
        [
            "user": .string(user), "count": .int(count), "top": top?.json ?? .null, "nextUp": nextUp?.json ?? .null,
            "alerts": .array(alerts.map(\.json)),
        ]
    }

    /// The same with only the alerts of `slice` (positions in the queue), and `"next"`: the
    /// cursor that continues after it (before it, `backward`), or null at the end.
    public func json(user: String, slice: Range<Int>, backward: Bool = false) -> JSONValue {
        let next: JSONValue = backward ? (slice.lowerBound > 0 ? .int(slice.lowerBound) : .null) : (slice.upperBound < count ? .int(slice.upperBound) : .null)
        return [
            "user": .string(user), "count": .int(count), "top": top?.json ?? .null, "nextUp": nextUp?.json ?? .null,
            "alerts": .array(alerts[slice].map(\.json)), "next": next,
        ]
    }
}
