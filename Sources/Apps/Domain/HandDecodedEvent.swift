import Commands
import EventStoreCore

/// An app's events with a decoder written by hand for the shapes the app writes, read in place
/// (a typed projection's fast path): ``decodedByHand(_:)`` takes what it knows, and anything
/// else goes through `Decodable` (``RecordableEvent/init(recorded:)``), so both accept the same
/// data, decode it to the same values and refuse the rest with the same error.
public protocol HandDecodedEvent: RecordableEvent {
    /// The event when the hand-written path takes its data; nil to leave it to `Decodable`.
    static func decodedByHand(_ view: EventView) -> Self?
}

extension HandDecodedEvent {
    /// Decodes the event: by hand when ``decodedByHand(_:)`` takes it, else through `Decodable`.
    ///
    /// Throws ``EventDecodingError`` when the event is none of these or its data not its shape.
    public init(view: EventView) throws(EventDecodingError) {
        if let decoded = Self.decodedByHand(view) {
            self = decoded
        } else {
            self = try Self(recorded: view.recordedEvent())
        }
    }
}
