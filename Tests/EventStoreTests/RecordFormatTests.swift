import EventStore
import Foundation
import Testing
import TestSupport

/// RecordFormat, the public decoder and encoder of the `events` table's values.
@Suite("Record format")
struct RecordFormatTests {
    @Test("the bytes on disk decode to the event the store reads, and encode back to themselves")
    func roundTripWithTheStore() async throws {
        // Given the document's worked example in a new store
        let directory = try TemporaryDirectory()
        try await FormatDocumentTests.writeExample(to: directory.path)
        let raw = try RawLMDB(path: directory.path)
        let record = try #require(try raw.get("events", bytes(of: 1)))
        raw.close()
        let store = try EventStore(path: directory.path)
        defer { store.close() }
        let read = try #require(try store.read(limit: .max).first)

        // When its record is decoded and encoded again
        let decoded = try record.withUnsafeBytes { try RecordFormat.decode($0, position: 1) }
        let encoded = try RecordFormat.encode(decoded)

        // Then it is the event the store reads, and the same bytes
        #expect(decoded == read)
        #expect(encoded == record)
    }

    @Test("bytes that are not a record are refused as damaged, naming the position")
    func refusals() throws {
        let event = RecordedEvent(
            position: 9, stream: "s", version: 1, id: SequentialIDs.id(1), type: "T", data: Data("{}".utf8),
            metadata: Data(), recordedAtMicroseconds: 0)
        let good = try RecordFormat.encode(event)
        var wrongFormat = good
        wrongFormat[0] = 3
        var flipped = good
        flipped[49] ^= 0x01
        var lyingLength = good
        lyingLength[43] = 3
        var noStream = good
        noStream[3] = 0
        var notUTF8 = good
        notUTF8[48] = 0xFF
        let cases: [(String, [UInt8])] = [
            ("empty", []), ("a header only, short", Array(good.prefix(47))), ("format 3", wrongFormat),
            ("a flipped bit the checksum catches", flipped),
            ("a data length past the end", lyingLength), ("an empty stream name", noStream),
            ("a stream name that is not UTF-8", notUTF8), ("one byte too many", good + [0]),
        ]
        for (name, bytes) in cases {
            let error = #expect(throws: EventStoreError.self, "\(name)") {
                try bytes.withUnsafeBytes { try RecordFormat.decode($0, position: 9) }
            }
            #expect(error?.code == .damaged, "\(name)")
            #expect(error?.message.contains("position 9") == true, "\(name): \(String(describing: error))")
        }
        #expect(try good.withUnsafeBytes { try RecordFormat.decode($0, position: 9) } == event)
        // The checksum covers the position: the same bytes read under another key are damage.
        let elsewhere = #expect(throws: EventStoreError.self) { try good.withUnsafeBytes { try RecordFormat.decode($0, position: 10) } }
        #expect(elsewhere?.message == "The record at position 10 does not match its checksum; run `esctl verify --deep` and restore from a backup.")
    }

    @Test("a field too long for its length field is refused by the encoder")
    func encoderRefusesOversizedFields() {
        let event = RecordedEvent(
            position: 1, stream: String(repeating: "s", count: 65_536), version: 1, id: SequentialIDs.id(1), type: "T",
            data: Data(), metadata: Data(), recordedAtMicroseconds: 0)
        #expect(throws: EventStoreError.self) { try RecordFormat.encode(event) }
    }
}
