import WireFormat
import EventStore
import Foundation
import Testing

/// The NDJSON line of `append --batch` and `import`: the store's limits are the line's.
@Suite("Event lines")
struct EventLineTests {
    func parse(_ text: String, number: Int = 4) throws(WireFormatError) -> EventLine {
        try EventLine(Array(text.utf8)[...], number: number)
    }

    @Test("a line within the limits parses, at the limits too")
    func withinLimits() throws {
        // Given a 200-byte stream name and data of exactly 16 MiB (as a base64 string)
        let name = String(repeating: "n", count: Limits.maximumNameBytes)
        let data = Data(repeating: 0x41, count: Limits.maximumDataBytes)
        let line = #"{"stream":"\#(name)","type":"T","data":"\#(data.base64EncodedString())","dataEncoding":"base64"}"#
        // When it is parsed, then it is that event
        let parsed = try parse(line)
        #expect(parsed.stream == name && parsed.event.type == "T" && parsed.event.data == data && parsed.event.metadata.isEmpty)
    }

    @Test("a line past a limit is refused as invalid input naming the line, with the store's rule as a clause", arguments: [
        (#"{"stream":"\#(String(repeating: "x", count: 201))","type":"T","data":{}}"#, "the stream name is 201 bytes long; use at most 200 bytes of UTF-8"),
        (#"{"stream":"s","type":"","data":{}}"#, "the event type name is empty; give a non-empty name"),
        (#"{"stream":"a\tb","type":"T","data":{}}"#, "the stream name contains a control character; use printable characters only"),
        (#"{"stream":"s","type":"T","data":{},"metadata":"\#(Data(count: Limits.maximumMetadataBytes + 1).base64EncodedString())","metadataEncoding":"base64"}"#,
         "an event's metadata is 65537 bytes; the limit is 65536 bytes (64 KiB)"),
    ])
    func pastALimit(_ line: String, _ clause: String) {
        let error = #expect(throws: WireFormatError.self) { try parse(line) }
        #expect(error?.code == .invalidLine && error?.line == 4)
        #expect(error?.message == "Line 4 is not a valid event: \(clause); nothing was written.")
    }

    @Test("data over 16 MiB is refused by its size")
    func dataTooLarge() {
        let data = Data(count: Limits.maximumDataBytes + 1).base64EncodedString()
        let error = #expect(throws: WireFormatError.self) { try parse(#"{"stream":"s","type":"T","data":"\#(data)","dataEncoding":"base64"}"#) }
        #expect(error?.message == "Line 4 is not a valid event: an event's data is 16777217 bytes; the limit is 16777216 bytes (16 MiB); nothing was written.")
    }
}
