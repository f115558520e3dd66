import Commands
import EventStoreCore

/// An item was put on a list.
public struct ItemAdded: EventData, Equatable {
    public static let eventType = "ItemAdded"
    public var item: String

    public init(item: String) {
        self.item = item
    }
}

/// An item was done.
public struct ItemCompleted: EventData, Equatable {
    public static let eventType = "ItemCompleted"
    public var item: String

    public init(item: String) {
        self.item = item
    }
}

/// An item was taken off a list.
public struct ItemRemoved: EventData, Equatable {
    public static let eventType = "ItemRemoved"
    public var item: String

    public init(item: String) {
        self.item = item
    }
}

/// Every event of a list, as the decider reads and records them.
public enum TodoEvent: RecordableEvent, Equatable {
    case added(ItemAdded)
    case completed(ItemCompleted)
    case removed(ItemRemoved)

    public init(recorded event: RecordedEvent) throws(EventDecodingError) {
        switch event.type {
        case ItemAdded.eventType: self = .added(try ItemAdded(recorded: event))
        case ItemCompleted.eventType: self = .completed(try ItemCompleted(recorded: event))
        case ItemRemoved.eventType: self = .removed(try ItemRemoved(recorded: event))
        default: throw EventDecodingError(event, reason: "\(event.type) is not a to-do event")
        }
    }

    public func newEvent() throws -> NewEvent {
        switch self {
        case .added(let event): try event.newEvent()
        case .completed(let event): try event.newEvent()
        case .removed(let event): try event.newEvent()
        }
    }
}
