import Foundation

/// The input limits every append is checked against before anything is written.
public enum Limits {
    /// The longest stream or event type name, in UTF-8 bytes.
    public static let maximumNameBytes = 200
    /// The largest event data, in bytes (16 MiB).
    public static let maximumDataBytes = 16 << 20
    /// The largest event metadata, in bytes (64 KiB).
    public static let maximumMetadataBytes = 64 << 10
    /// The most events one append call may carry, across all of its streams.
    public static let maximumEventsPerAppend = 10_000
    /// The most tags one event may carry, and the most types or tags one query item may list.
    public static let maximumTagsPerEvent = 32
    /// The longest tag, in UTF-8 bytes.
    public static let maximumTagBytes = 200
    /// The most items one query may have: one per event of the largest append (a condition
    /// that guards each event's own tags, as DCB clients write them). Each item is a seek.
    public static let maximumQueryItems = maximumEventsPerAppend
    /// The recorded times an event may be given (``NewEvent/recordedAtMicroseconds``): from
    /// 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z, in microseconds since 1970, so that
    /// every recorded time prints as a four-digit ISO 8601 year.
    public static let recordedAtRange: ClosedRange<Int64> = -62_135_596_800_000_000...253_402_300_799_999_999

    /// Checks a stream or type name: non-empty, at most ``maximumNameBytes`` bytes of UTF-8, and
    /// no control characters. Throws ``EventStoreError/Code/invalidInput`` naming the rule broken.
    package static func validateName(_ name: String, kind: String) throws(EventStoreError) {
        let byteCount = name.utf8.count
        if byteCount == 0 {
            throw EventStoreError(.invalidInput, "The \(kind) name is empty; give a non-empty name.")
        }
        if byteCount > maximumNameBytes {
            throw EventStoreError(
                .invalidInput,
                "The \(kind) name is \(byteCount) bytes long; use at most \(maximumNameBytes) bytes of UTF-8.")
        }
        // ASCII names, the usual case, are checked byte by byte; others scalar by scalar.
        var isASCII = true
        var hasControl = false
        for byte in name.utf8 {
            if byte < 0x20 || byte == 0x7F { hasControl = true }
            if byte >= 0x80 { isASCII = false }
        }
        if !isASCII && !hasControl {
            hasControl = name.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
        if hasControl {
            throw EventStoreError(
                .invalidInput, "The \(kind) name contains a control character; use printable characters only.")
        }
        if !isASCII && name.unicodeScalars.contains(where: isBidirectionalControl) {
            // They reorder what a terminal or a page shows, so one name could pose as another.
            throw EventStoreError(
                .invalidInput,
                "The \(kind) name contains a bidirectional control character (U+202E or the like), which hides what a name says; leave it out.")
        }
        // An ASCII name without controls is whitespace only when it is spaces only: checked by
        // byte, since splitting it into characters costs more than the rest of an append's checks.
        if isASCII ? name.utf8.allSatisfy({ $0 == 0x20 }) : name.allSatisfy(\.isWhitespace) {
            throw EventStoreError(.invalidInput, "The \(kind) name is only whitespace; give a name with something to read in it.")
        }
    }

    /// Whether `scalar` is one of Unicode's bidirectional controls: the marks (U+061C, U+200E,
    /// U+200F), embeddings and overrides (U+202A to U+202E) and isolates (U+2066 to U+2069).
    static func isBidirectionalControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// Checks a tag: non-empty, at most ``maximumTagBytes`` bytes of UTF-8, no control
    /// characters. Throws ``EventStoreError/Code/invalidInput`` naming the rule broken.
    package static func validateTag(_ tag: String) throws(EventStoreError) {
        try validateName(tag, kind: "tag")
    }

    /// Checks an event's tags: at most ``maximumTagsPerEvent``, each valid, none given twice.
    package static func validateTags(_ tags: [String]) throws(EventStoreError) {
        guard !tags.isEmpty else { return }
        if tags.count > maximumTagsPerEvent {
            throw EventStoreError(
                .invalidInput, "An event carries \(tags.count) tags; give at most \(maximumTagsPerEvent).")
        }
        for tag in tags { try validateTag(tag) }
        // Byte by byte, as the indexes compare tags (not by Unicode canonical equivalence); each
        // pair of at most 32, which costs less than hashing copies of them.
        for (index, tag) in tags.enumerated() where tags[..<index].contains(where: { $0.utf8.elementsEqual(tag.utf8) }) {
            throw EventStoreError(.invalidInput, "An event carries the same tag twice; give each tag once.")
        }
    }

    /// What the names of the store's own streams start with (`$deletions`, `$forgotten`,
    /// `$projections`, ...): appends through the public API refuse them.
    public static let systemStreamPrefix = "$"

    /// Checks a whole append against every limit: at least one stream, an expectation only on a
    /// stream's first part, valid names, sizes, event counts, no event id given twice, and no
    /// stream of the store's own (a name starting with `$`) unless the store itself writes it
    /// (``SystemWrites/isActive``).
    package static func validate(_ appends: [StreamAppend]) throws(EventStoreError) {
        if appends.isEmpty {
            throw EventStoreError(.invalidInput, "The append names no stream; give at least one stream and event.")
        }
        var total = 0
        // A stream may come back with `.any` only: without any expectation in the append there is
        // nothing to check, and its names need no hashing.
        let checksRepeatedStreams = appends.contains { $0.expectedVersion != .any }
        var streams = Set<String>()
        var ids = Set<UUID>()
        for append in appends {
            try validateName(append.stream, kind: "stream")
            if append.stream == StreamDeletion.systemStream {
                throw EventStoreError(
                    .invalidInput,
                    "The stream '\(append.stream)' belongs to the store: its events record deletions; append to another stream.")
            }
            if append.stream == Forgetting.systemStream && !SystemWrites.isActive {
                throw EventStoreError(
                    .invalidInput,
                    "The stream '\(append.stream)' belongs to the store: its events record forgotten subjects; use forget, or append to another stream.")
            }
            // By its first byte: `hasPrefix` compares characters, and "$" + U+200D is another one.
            if append.stream.utf8.first == UInt8(ascii: "$") && !SystemWrites.isActive {
                // $projections, for one, decides what rebuilds pass over: a client that could
                // append there could hide any event from any read model.
                throw EventStoreError(
                    .invalidInput,
                    "The stream '\(append.stream)' belongs to the store: names starting with '$' are its own streams, written by its own operations; append to a stream whose name does not start with '$'.")
            }
            if checksRepeatedStreams && !streams.insert(append.stream).inserted && append.expectedVersion != .any {
                throw EventStoreError(
                    .invalidInput,
                    "The stream '\(append.stream)' appears again in one append with an expected version; give its expectation on its first part only.")
            }
            if append.events.isEmpty {
                throw EventStoreError(
                    .invalidInput, "The append to '\(append.stream)' has no events; give at least one event.")
            }
            total += append.events.count
            if total > maximumEventsPerAppend {
                throw EventStoreError(
                    .invalidInput,
                    "The append carries more than \(maximumEventsPerAppend) events; split it into several appends.")
            }
            for event in append.events {
                try validate(event)
                if let id = event.id, !ids.insert(id).inserted {
                    throw EventStoreError(
                        .invalidInput, "The event id \(id.lowercasedString) appears twice in one append; give each event its own id.")
                }
            }
        }
    }

    /// Checks one event on its own: its type name, and the sizes of its data and metadata.
    /// Throws ``EventStoreError/Code/invalidInput`` naming the rule broken.
    package static func validate(_ event: NewEvent) throws(EventStoreError) {
        try validateName(event.type, kind: "event type")
        if event.data.count > maximumDataBytes {
            throw EventStoreError(
                .invalidInput,
                "An event's data is \(event.data.count) bytes; the limit is \(maximumDataBytes) bytes (16 MiB).")
        }
        if event.metadata.count > maximumMetadataBytes {
            throw EventStoreError(
                .invalidInput,
                "An event's metadata is \(event.metadata.count) bytes; the limit is \(maximumMetadataBytes) bytes (64 KiB).")
        }
        if let recordedAt = event.recordedAtMicroseconds, !recordedAtRange.contains(recordedAt) {
            throw EventStoreError(
                .invalidInput, "An event's recorded time is outside the years 1 to 9999; give a time in that range.")
        }
        try validateTags(event.tags)
        if event.dataFormat == .binary && !event.personal.isEmpty {
            throw EventStoreError(
                .invalidInput,
                "An event with binary data marks personal data; personal parts are members of JSON data: append the data as JSON, or mark nothing personal.")
        }
        if event.schemaVersion == 0 {
            throw EventStoreError(.invalidInput, "An event's schema version is 0; schema versions start at 1.")
        }
    }
}
