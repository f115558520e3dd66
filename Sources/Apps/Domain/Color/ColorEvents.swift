import Commands
import EventStoreCore

/// A key of the calculator's keypad was pressed: a digit `0`–`9` or `A`–`F`, `backspace` or
/// `clear`.
public struct KeyPressed: EventData, Equatable {
    public static let eventType = "KeyPressed"
    public var key: String
    public init(key: String) { self.key = key }
}

/// The calculator's display was set directly, to `#` and up to 8 upper-case hex digits.
public struct DisplaySet: EventData, Equatable {
    public static let eventType = "DisplaySet"
    public var hexText: String
    public init(hexText: String) { self.hexText = hexText }
}

/// The calculator's events, as its decider and projection read them.
public enum ColorEvent: RecordableEvent, Equatable {
    case pressed(KeyPressed)
    case set(DisplaySet)

    public static let types: Set<String> = [KeyPressed.eventType, DisplaySet.eventType]

    public init(recorded event: RecordedEvent) throws(EventDecodingError) {
        switch event.type {
        case KeyPressed.eventType:
            let pressed = try KeyPressed(recorded: event)
            guard ColorKey(pressed.key) != nil else { throw EventDecodingError(event, reason: "'\(pressed.key)' is not a key of the keypad") }
            self = .pressed(pressed)
        case DisplaySet.eventType:
            let set = try DisplaySet(recorded: event)
            guard ColorDisplay(hexText: set.hexText) != nil else {
                throw EventDecodingError(event, reason: "'\(set.hexText)' is not a display (# and up to 8 hex digits)")
            }
            self = .set(set)
        default:
            throw EventDecodingError(event, reason: "\(event.type) is not a color calculator event")
        }
    }

    public func newEvent() throws -> NewEvent {
        switch self {
        case let .pressed(event): return try event.newEvent()
        case let .set(event): return try event.newEvent()
        }
    }
}
