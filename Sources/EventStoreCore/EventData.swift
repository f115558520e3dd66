import Foundation

/// An event's data as a Swift value: `Codable` (the one description of its fields), and recorded
/// under a stable type name. Its data is the value's JSON: members in declaration order, a nil
/// optional as `null` (`JSONValueEncoder`), read back by `JSONBytesDecoder` without a tree.
///
/// ```swift
/// struct ItemAdded: EventData {
///     static let eventType = "ItemAdded"
///     var item: String
///     var quantity: Int
/// }
/// let new = try ItemAdded(item: "pen", quantity: 2).newEvent()
/// let back = try ItemAdded(recorded: recordedEvent)
/// ```
public protocol EventData: Codable, Sendable {
    /// The type name the event is recorded under. Stable: changing it orphans recorded events
    /// (unless an ``Upcaster`` renames the old name into the new one).
    static var eventType: String { get }
    /// The version of the type's shape this value encodes (1 unless declared): recorded with
    /// each event, so that the store's upcasters know which steps older events need. Declare
    /// the new version when the shape changes, and register an ``Upcaster`` from the old one.
    static var schemaVersion: UInt16 { get }
    /// What of this value's data is personal to whom (none unless declared): stored encrypted
    /// under each subject's key, forgotten with it (``EventLog/forget(_:)``). A type that
    /// declares some decodes the forgotten marker in those fields
    /// (`KeyedDecodingContainer.decode(_:forKey:orWhenForgotten:)`).
    var personalData: [PersonalData] { get }
}

extension EventData {
    /// Version 1: the shape of a type that never evolved.
    public static var schemaVersion: UInt16 { 1 }

    /// Nothing personal.
    public var personalData: [PersonalData] { [] }

    /// The event ready to append (its data the value's JSON, its schema version the type's).
    ///
    /// Throws `EncodingError` when the value holds what JSON cannot (an infinite number).
    public func newEvent(id: UUID? = nil, metadata: Data = Data()) throws -> NewEvent {
        NewEvent(
            id: id, type: Self.eventType, data: Data(try JSONValueEncoder.serialize(self).utf8), metadata: metadata,
            schemaVersion: Self.schemaVersion, personal: personalData)
    }

    /// Decodes a recorded event of this type.
    ///
    /// Throws ``EventDecodingError`` when the event has another type or its data is not this
    /// type's.
    public init(recorded event: RecordedEvent) throws(EventDecodingError) {
        guard event.type == Self.eventType else {
            throw EventDecodingError(event, reason: "it is a \(event.type), not a \(Self.eventType)")
        }
        do {
            self = try JSONBytesDecoder.decode(Self.self, from: event.data)
        } catch {
            throw EventDecodingError(event, reason: "its data is not a \(Self.eventType): \(error)")
        }
    }
}

/// A recorded event that is not what the code reading it expects: another type, or data of
/// another shape (a hand-appended event, an older shape).
public struct EventDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The event's stream.
    public let stream: String
    /// The event's position.
    public let position: UInt64
    /// The event's type.
    public let type: String
    /// Why it does not decode.
    public let reason: String

    public init(stream: String, position: UInt64, type: String, reason: String) {
        self.stream = stream
        self.position = position
        self.type = type
        self.reason = reason
    }

    public init(_ event: RecordedEvent, reason: String) {
        self.init(stream: event.stream, position: event.position, type: event.type, reason: reason)
    }

    public var description: String { "the event at position \(position) (\(type) in '\(stream)') does not decode: \(reason)" }
}
