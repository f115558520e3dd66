import Foundation

/// An event to append: its type, its data and metadata as bytes, and optionally its id.
///
/// Give an ``id`` to make the append idempotent: appending an event whose id is already recorded
/// (with the same stream and content) returns the original position and writes nothing. Without
/// an id, the store's injected id generator assigns one.
public struct NewEvent: Sendable, Equatable {
    /// The caller's id for this event, or nil to let the store assign one.
    public var id: UUID?
    /// The event's type name: non-empty UTF-8, no control characters, at most 200 bytes.
    public var type: String
    /// The event's payload (JSON for everything `esctl` writes), at most 16 MiB.
    public var data: Data
    /// Free-form metadata bytes, at most 64 KiB.
    public var metadata: Data
    /// The time to record the event with, in microseconds since 1970-01-01T00:00:00Z, for copies
    /// of events recorded elsewhere (imports, migrations, restores); nil, the normal case, takes
    /// the store's clock at commit. A log that holds copies may have times that go backwards
    /// between positions. Between the years 1 and 9999 (``Limits/recordedAtRange``).
    public var recordedAtMicroseconds: Int64?
    /// The version of the type's schema the data is written in: 1 (the default) until the type
    /// evolves, at most 65,535. Recorded with the event; part of its content for idempotency.
    public var schemaVersion: UInt16
    /// What of the data is personal to whom: stored encrypted with each subject's key, read back
    /// decrypted until the subject is forgotten (``EventLog/forget(_:)``). Empty: nothing is.
    public var personal: [PersonalData]
    /// The event's tags (``Limits/maximumTagsPerEvent`` at most, each a name of at most
    /// ``Limits/maximumTagBytes`` bytes, none twice): stored with it and indexed, so that
    /// queries (``EventQuery``) and conditional appends (``AppendCondition``) find it without a scan.
    /// Part of its content for idempotency; kept in the order given.
    public var tags: [String]
    /// What the data is: JSON (the default) or bytes the store never parses (``DataFormat``).
    public var dataFormat: DataFormat

    /// Creates an event to append. Give `recordedAtMicroseconds` only to copy an event recorded
    /// elsewhere with its original time; `schemaVersion` when the data is written in a later
    /// version of its type's schema; `personal` to mark data as personal to subjects; `tags` to
    /// find it by query; `dataFormat` `.binary` for data that is not JSON and must be kept byte
    /// for byte.
    public init(
        id: UUID? = nil, type: String, data: Data = Data(), metadata: Data = Data(), recordedAtMicroseconds: Int64? = nil,
        schemaVersion: UInt16 = 1, personal: [PersonalData] = [], tags: [String] = [], dataFormat: DataFormat = .json
    ) {
        self.dataFormat = dataFormat
        self.tags = tags
        self.schemaVersion = schemaVersion
        self.personal = personal
        self.id = id
        self.type = type
        self.data = data
        self.metadata = metadata
        self.recordedAtMicroseconds = recordedAtMicroseconds
    }
}

/// The events to append to one stream, with the expectation that guards them: one part of an
/// atomic append that may span several streams.
public struct StreamAppend: Sendable, Equatable {
    /// The stream's name: non-empty UTF-8, no control characters, at most 200 bytes.
    public var stream: String
    /// The events, in order; at least one.
    public var events: [NewEvent]
    /// What the stream's version must be for the append to go ahead.
    public var expectedVersion: ExpectedVersion

    /// Creates one stream's part of an append.
    public init(stream: String, events: [NewEvent], expectedVersion: ExpectedVersion = .any) {
        self.stream = stream
        self.events = events
        self.expectedVersion = expectedVersion
    }
}

/// What an append did to one stream.
public struct AppendResult: Sendable, Equatable {
    /// The stream's name.
    public let stream: String
    /// The global position of each appended event, in the order given.
    public let positions: [UInt64]
    /// The stream's version after the last of these events (the version of that event).
    public let version: UInt64
    /// True when every event was already recorded (an idempotent retry): nothing was written and
    /// the original positions are returned.
    public let alreadyRecorded: Bool
    /// The id of each event, given or generated, in the order given.
    public let ids: [UUID]
    /// The time the commit recorded the events with (those given their own time keep it), in
    /// microseconds since 1970; for an idempotent retry, the time of the original's last event.
    public let recordedAtMicroseconds: Int64
    /// True when some of the already recorded events were deleted since (their ids stay known
    /// forever): nothing was written, and their positions are holes now.
    public let deleted: Bool

    public init(
        stream: String, positions: [UInt64], version: UInt64, alreadyRecorded: Bool, ids: [UUID] = [],
        recordedAtMicroseconds: Int64 = 0, deleted: Bool = false
    ) {
        self.deleted = deleted
        self.stream = stream
        self.positions = positions
        self.version = version
        self.alreadyRecorded = alreadyRecorded
        self.ids = ids
        self.recordedAtMicroseconds = recordedAtMicroseconds
    }

    /// The events this result recorded, given the events that were appended (in the order given):
    /// positions, versions, ids and times from the append, the rest from the events. No read.
    public func recordedEvents(_ events: [NewEvent]) -> [RecordedEvent] {
        let firstVersion = version &- UInt64(positions.count) &+ 1
        return zip(events, positions).enumerated().map { index, pair in
            RecordedEvent(
                position: pair.1, stream: stream, version: firstVersion &+ UInt64(index),
                id: index < ids.count ? ids[index] : pair.0.id ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                type: pair.0.type, data: StoredForm.of(pair.0.data, format: pair.0.dataFormat), metadata: StoredForm.of(pair.0.metadata),
                recordedAtMicroseconds: pair.0.recordedAtMicroseconds ?? recordedAtMicroseconds, schemaVersion: pair.0.schemaVersion,
                personal: pair.0.personal, tags: pair.0.tags, dataFormat: pair.0.dataFormat)
        }
    }
}
