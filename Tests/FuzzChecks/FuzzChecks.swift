import EventStore
import Foundation
import WireFormat

/// The properties the fuzz targets check on arbitrary bytes, shared with the regression tests
/// that replay every input the fuzzer ever found (`Fuzz/Regressions`).
///
/// Each check returns normally when the input is handled as promised (decoded, or refused with
/// the documented error) and throws a ``Finding`` when it is not; a crash is a finding too.
public enum FuzzChecks {
    /// A broken promise, in one sentence.
    public struct Finding: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The record decoder: any bytes either decode, or are refused as damaged. A record that
    /// decodes encodes back, in the current format (2), to the same bytes with the flags and
    /// reserved bytes as zero and its checksum recomputed (a record of format 1 gains one), and
    /// that encoding decodes to the same event.
    public static func record(_ bytes: UnsafeRawBufferPointer) throws(Finding) {
        try record(bytes, encode: { event throws(EventStoreError) in try RecordFormat.encode(event) })
    }

    /// ``record(_:)`` with the encoder given: the regression tests pass a broken one to show that
    /// the check finds what it looks for.
    package static func record(
        _ bytes: UnsafeRawBufferPointer, encode: (RecordedEvent) throws(EventStoreError) -> [UInt8]
    ) throws(Finding) {
        let event: RecordedEvent
        do {
            event = try RecordFormat.decode(bytes, position: 1)
        } catch {
            guard error.code == .damaged else { throw Finding("decoding failed with \(error.code), not damaged: \(error)") }
            return
        }
        let encoded: [UInt8]
        do {
            encoded = try encode(event)
        } catch {
            throw Finding("a decoded record does not encode: \(error)")
        }
        var expected = Array(bytes)
        for reserved in [1, 6, 7] { expected[reserved] = 0 }
        if expected[0] == 2 { expected.removeLast(4) }
        expected[0] = 2
        guard encoded.count >= 4, Array(encoded.dropLast(4)) == expected else {
            throw Finding("a decoded record encodes to other bytes")
        }
        let again: RecordedEvent
        do {
            again = try encoded.withUnsafeBytes { raw throws(EventStoreError) in try RecordFormat.decode(raw, position: 1) }
        } catch {
            throw Finding("a record's encoding does not decode: \(error)")
        }
        guard again == event else { throw Finding("a record's encoding decodes to another event") }
    }

    /// The NDJSON line parser of `append --batch` and `import`: any bytes either parse, or are
    /// refused as an invalid line naming it. A parsed line, written again as a canonical
    /// line (data and metadata in base64), parses to the same event, and passes the store's own
    /// limit checks (the parser applies them).
    public static func eventLine(_ bytes: UnsafeRawBufferPointer) throws(Finding) {
        try eventLine(bytes, canonical: canonicalLine)
    }

    /// ``eventLine(_:)`` with the canonical writer given: the regression tests pass a broken one
    /// to show that the check finds what it looks for.
    package static func eventLine(_ bytes: UnsafeRawBufferPointer, canonical: (EventLine) -> String) throws(Finding) {
        let parsed: EventLine
        do {
            parsed = try EventLine(Array(bytes)[...], number: 7)
        } catch {
            guard error.code == .invalidLine, error.message.hasPrefix("Line 7 is not a valid event: ") else {
                throw Finding("a bad line was refused with \(error.code): \(error.message)")
            }
            return
        }
        let canonicalBytes = Array(canonical(parsed).utf8)
        let again: EventLine
        do {
            again = try EventLine(canonicalBytes[...], number: 7)
        } catch {
            throw Finding("the canonical line of a parsed event does not parse: \(error.message)")
        }
        guard again.stream == parsed.stream, again.event == parsed.event, again.expectedVersion == parsed.expectedVersion else {
            throw Finding("the canonical line parses to another event")
        }
        // A line that parses has passed the store's limits: the store's own checks agree.
        do {
            try Limits.validateName(parsed.stream, kind: "stream")
            try Limits.validate(parsed.event)
        } catch {
            throw Finding("a parsed line breaks the store's limits: \(error.message)")
        }
    }

    /// The line `export` would write for the event, with every byte field in base64.
    package static func canonicalLine(_ line: EventLine) -> String {
        var object = JSONObjectWriter()
        object.add("stream", line.stream)
        object.add("type", line.event.type)
        // Binary data as base64 (which is what makes it binary); JSON data as the JSON it is.
        if line.event.dataFormat == .binary {
            object.add("data", line.event.data.base64EncodedString())
            object.add("dataEncoding", "base64")
        } else {
            object.add("data", rawJSON: String(decoding: line.event.data, as: UTF8.self))
        }
        object.add("metadata", line.event.metadata.base64EncodedString())
        object.add("metadataEncoding", "base64")
        if let id = line.event.id { object.add("id", id.uuidString) }
        switch line.expectedVersion {
        case nil: break
        case .any?: object.add("expectedVersion", "any")
        case .noStream?: object.add("expectedVersion", "no-stream")
        case .streamExists?: object.add("expectedVersion", "exists")
        case .exact(let version)?: object.add("expectedVersion", version)
        }
        return object.finish()
    }
}
