import Commands
import EventStoreCore

/// A book was put on the shelf.
public struct BookAdded: EventData, Equatable {
    public static let eventType = "BookAdded"
    public var isbn: String
    public var title: String
}

/// A member borrowed a book.
public struct BookLent: EventData, Equatable {
    public static let eventType = "BookLent"
    public var isbn: String
    public var member: String
}

/// A member brought a book back.
public struct BookReturned: EventData, Equatable {
    public static let eventType = "BookReturned"
    public var isbn: String
    public var member: String
}

/// Every event of the library, as the decider reads and records them.
public enum LendingEvent: RecordableEvent, Equatable {
    case added(BookAdded)
    case lent(BookLent)
    case returned(BookReturned)

    /// The three types.
    public static let types = [BookAdded.eventType, BookLent.eventType, BookReturned.eventType]

    public init(recorded event: RecordedEvent) throws(EventDecodingError) {
        switch event.type {
        case BookAdded.eventType: self = .added(try BookAdded(recorded: event))
        case BookLent.eventType: self = .lent(try BookLent(recorded: event))
        case BookReturned.eventType: self = .returned(try BookReturned(recorded: event))
        default: throw EventDecodingError(event, reason: "\(event.type) is not a lending event")
        }
    }

    public func newEvent() throws -> NewEvent {
        switch self {
        case .added(let event): try event.newEvent()
        case .lent(let event): try event.newEvent()
        case .returned(let event): try event.newEvent()
        }
    }
}
