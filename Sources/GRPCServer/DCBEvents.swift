import EventStoreCore
import Foundation

/// How an event of UmaDB's DCB protocol sits in the store (docs/FORMAT.md, "Events appended
/// over gRPC"), both ways.
///
/// An event appended over gRPC carries no stream: it goes to the stream ``stream`` (`dcb`), whose
/// version then counts the events appended over gRPC. Its data is binary (``DataFormat/binary``):
/// kept byte for byte, never parsed. Its metadata is one JSON object: `"$uuid"` (the client's
/// id, when it gave one), then the client's entries in the order given, then `"$tracking"`
/// (`{"source":S,"position":P}`, when the append carried tracking info). The client's id is not
/// the store's event id, because UmaDB lets one id be appended many times; the store gives each
/// event its own.
///
/// Read back, any event of the store is a DCB event: its type and tags; its data's bytes; its
/// uuid from `"$uuid"`, else none for an event of the `dcb` stream and the store's id for others; its metadata entries the members of a JSON object
/// metadata other than those two (string values as the strings, others as their JSON text).
enum DCBEvents {
    /// The stream events appended over gRPC go to.
    static let stream = "dcb"
    /// The metadata member that keeps the client's id.
    static let uuidKey = "$uuid"
    /// The metadata member that keeps the tracking info the event was appended with.
    static let trackingKey = "$tracking"
    /// The prefix of the store's tracking names that DCB tracking sources take, so that a
    /// source and a processor of this log never share a name.
    static let trackingPrefix = "dcb:"

    /// The store's event for a DCB event. Throws ``DCBError`` for an id that is not a UUID
    /// (corruption, as UmaDB answers it), a reserved or repeated metadata key, or an entry over
    /// UmaDB's own bounds.
    static func newEvent(_ event: Umadb_V1_Event, tracking: Umadb_V1_TrackingInfo?) throws(DCBError) -> NewEvent {
        var metadata = "{"
        var first = true
        func member(_ key: String, rawJSON: String) {
            if !first { metadata += "," }
            first = false
            metadata += JSONWriter.quote(key) + ":" + rawJSON
        }
        if let uuid = try uuid(event.uuid) { member(uuidKey, rawJSON: JSONWriter.quote(uuid.lowercasedString)) }
        var keys = Set<String>()
        for entry in event.metadata {
            guard entry.key != uuidKey, entry.key != trackingKey else {
                throw DCBError(.invalidArgument, "metadata key '\(entry.key)' is reserved by this server (it keeps the event's uuid and tracking info)")
            }
            guard keys.insert(entry.key).inserted else { throw DCBError(.invalidArgument, "metadata contains duplicate keys") }
            member(entry.key, rawJSON: JSONWriter.quote(entry.value))
        }
        if let tracking {
            member(trackingKey, rawJSON: "{\"source\":\(JSONWriter.quote(tracking.source)),\"position\":\(tracking.position)}")
        }
        metadata += "}"
        return NewEvent(
            type: event.eventType, data: event.data, metadata: first ? Data() : Data(metadata.utf8), tags: event.tags,
            dataFormat: .binary)
    }

    /// A client's id: nil when empty; the UUID of its hyphenated or 32-digit form, in any case.
    /// Throws ``DCBError`` (corruption, as UmaDB answers it) otherwise.
    static func uuid(_ text: String) throws(DCBError) -> UUID? {
        guard !text.isEmpty else { return nil }
        if let uuid = UUID(uuidString: text) { return uuid }
        let utf8 = Array(text.utf8)
        if utf8.count == 32, utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }) {
            let hyphenated = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(decoding: utf8[$0], as: UTF8.self) }.joined(separator: "-")
            if let uuid = UUID(uuidString: hyphenated) { return uuid }
        }
        throw DCBError(.corruption, "Invalid UUID in Event")
    }

    /// The DCB form of a recorded event.
    static func sequenced(_ event: RecordedEvent) -> Umadb_V1_SequencedEvent {
        let back = ReadBack(event)
        var out = Umadb_V1_Event()
        out.eventType = event.type
        out.tags = event.tags
        out.data = event.data
        out.uuid = back.uuid
        out.metadata = back.entries
        var sequenced = Umadb_V1_SequencedEvent()
        sequenced.position = event.position
        sequenced.event = out
        if let tracking = back.tracking { sequenced.trackingInfo = tracking }
        return sequenced
    }

    /// What a recorded event's metadata and id give its DCB form: its uuid, its tracking info
    /// and its metadata entries (``sequenced(_:)`` builds the message of them, `EncodedResponse`
    /// writes them straight).
    struct ReadBack {
        /// The client's id (`"$uuid"`); an event appended over gRPC without one: empty, as UmaDB
        /// answers; any other event: the store's id.
        var uuid: String
        var tracking: Umadb_V1_TrackingInfo?
        var entries: [Umadb_V1_MetadataEntry] = []

        init(_ event: RecordedEvent) {
            self = event.metadata.withUnsafeBytes { metadata in
                ReadBack(metadata: metadata, isDCBStream: event.stream == stream, id: event.id)
            }
        }

        init(_ event: EventView) {
            self.init(metadata: event.metadata, isDCBStream: event.streamUTF8.elementsEqual(stream.utf8), id: event.id)
        }

        private init(metadata raw: UnsafeRawBufferPointer, isDCBStream: Bool, id: UUID) {
            var uuid: String?
            var tracking: Umadb_V1_TrackingInfo?
            var entries: [Umadb_V1_MetadataEntry] = []
            if raw.first == UInt8(ascii: "{") {
                try? JSONScanner.forEachMember(ofObject: raw) { keyRange, valueRange throws(JSONError) in
                    let key = try JSONScanner.string(UnsafeRawBufferPointer(rebasing: raw[keyRange]))
                    let value = UnsafeRawBufferPointer(rebasing: raw[valueRange])
                    let isString = value.first == UInt8(ascii: "\"")
                    if key == uuidKey, isString {
                        uuid = try JSONScanner.string(value)
                    } else if key == trackingKey {
                        tracking = trackingInfo(value)
                    } else {
                        var entry = Umadb_V1_MetadataEntry()
                        entry.key = key
                        entry.value = isString ? try JSONScanner.string(value) : String(decoding: value, as: UTF8.self)
                        entries.append(entry)
                    }
                }
            }
            self.uuid = uuid ?? (isDCBStream ? "" : id.lowercasedString)
            self.tracking = tracking
            self.entries = entries
        }
    }

    /// The client's id an event was appended with (`"$uuid"`), else the store's id: what
    /// ``sequenced(_:)`` answers as its uuid.
    static func uuidText(of event: RecordedEvent) -> String {
        ReadBack(event).uuid
    }

    private static func trackingInfo(_ value: UnsafeRawBufferPointer) -> Umadb_V1_TrackingInfo? {
        var info = Umadb_V1_TrackingInfo()
        var hasSource = false
        try? JSONScanner.forEachMember(ofObject: value) { keyRange, valueRange throws(JSONError) in
            let key = try JSONScanner.string(UnsafeRawBufferPointer(rebasing: value[keyRange]))
            let member = UnsafeRawBufferPointer(rebasing: value[valueRange])
            if key == "source" {
                info.source = try JSONScanner.string(member)
                hasSource = true
            } else if key == "position", let position = UInt64(String(decoding: member, as: UTF8.self)) {
                info.position = position
            }
        }
        return hasSource ? info : nil
    }

    /// The store's query for a DCB query: absent, without items or with an empty item, every
    /// event.
    static func query(_ query: Umadb_V1_Query?) -> EventQuery {
        guard let query, !query.items.isEmpty else { return .all }
        return EventQuery(query.items.map { QueryItem(types: $0.types, tags: $0.tags) })
    }
}
