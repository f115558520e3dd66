import Foundation

/// An event as the log holds it: where it is, what it is, and when it was recorded.
public struct RecordedEvent: Sendable, Equatable, Hashable {
    /// The event's global position: gapless, starting at 1, increasing in commit order.
    public let position: UInt64
    /// The stream it belongs to.
    public let stream: String
    /// Its version within the stream, starting at 1.
    public let version: UInt64
    /// Its id (unique in the log).
    public let id: UUID
    /// Its type name.
    public let type: String
    /// Its payload bytes.
    public let data: Data
    /// Its metadata bytes (empty when none were given).
    public let metadata: Data
    /// When it was recorded, by the store's injected clock, in microseconds since 1970-01-01T00:00:00Z.
    public let recordedAtMicroseconds: Int64
    /// The version of its type's schema its data was written in (1 until the type evolves;
    /// records written before schema versions were kept read as 1).
    public let schemaVersion: UInt16
    /// What of its data is personal to whom (empty when nothing is), each part marked
    /// ``PersonalData/isForgotten`` when its subject was forgotten: the data then holds
    /// `{"$forgotten":"SUBJECT"}` where that part was.
    public var personal: [PersonalData] { personalParts ?? [] }
    /// Nil for the events without personal data (nearly all): nothing to retain when an event is copied.
    private let personalParts: [PersonalData]?
    /// Its tags, in the order they were given (empty when none).
    public let tags: [String]
    /// What its data is: JSON or bytes the store never parses (``DataFormat``).
    public let dataFormat: DataFormat

    public init(
        position: UInt64, stream: String, version: UInt64, id: UUID, type: String, data: Data,
        metadata: Data, recordedAtMicroseconds: Int64, schemaVersion: UInt16 = 1, personal: [PersonalData] = [], tags: [String] = [],
        dataFormat: DataFormat = .json
    ) {
        self.dataFormat = dataFormat
        self.tags = tags
        self.schemaVersion = schemaVersion
        self.personalParts = personal.isEmpty ? nil : personal
        self.position = position
        self.stream = stream
        self.version = version
        self.id = id
        self.type = type
        self.data = data
        self.metadata = metadata
        self.recordedAtMicroseconds = recordedAtMicroseconds
    }

    /// When it was recorded, as a `Date`.
    public var recordedAt: Date { Self.date(microseconds: recordedAtMicroseconds) }

    /// A recorded time as a `Date`.
    static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}
