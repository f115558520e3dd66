import EventStore
import Foundation
import Testing
import TestSupport

@_spi(Records) import EventStoreCore

/// Binary data (DataFormat.binary): kept byte for byte, recorded as such, never parsed.
@Suite("Binary data")
struct BinaryDataTests {
    @Test("binary data that happens to be JSON with white space is kept byte for byte, and reads back binary")
    func keptByteForByte() async throws {
        // Given JSON bytes with white space, appended once as binary and once as JSON.
        let f = try StoreFixture()
        let bytes = Data("{ \"a\" : 1 }".utf8)
        _ = try await f.store.append(to: "s", events: [NewEvent(type: "T", data: bytes, dataFormat: .binary)])
        _ = try await f.store.append(to: "s", events: [NewEvent(type: "T", data: bytes)])

        // When they are read back.
        let binary = try #require(try f.store.event(at: 1))
        let json = try #require(try f.store.event(at: 2))

        // Then the binary one kept its bytes and format; the JSON one was compacted.
        #expect(binary.data == bytes)
        #expect(binary.dataFormat == .binary)
        #expect(json.data == Data(#"{"a":1}"#.utf8))
        #expect(json.dataFormat == .json)
        // And the record's flag says so, under the checksum (the record decodes as written).
        let encoded = try RecordFormat.encode(binary)
        #expect(encoded[1] & RecordCodec.binaryDataFlag != 0)
        #expect(try encoded.withUnsafeBytes { try RecordFormat.decode($0, position: 1) } == binary)
    }

    @Test("the format is part of the content: the same bytes and id as JSON are another event")
    func formatIsContent() async throws {
        // Given a binary event appended with an id.
        let f = try StoreFixture()
        let id = SequentialIDs.id(7)
        let bytes = Data("raw".utf8)
        _ = try await f.store.append(to: "s", events: [NewEvent(id: id, type: "T", data: bytes, dataFormat: .binary)])

        // When the same is appended again, and then as JSON.
        let again = try await f.store.append(to: "s", events: [NewEvent(id: id, type: "T", data: bytes, dataFormat: .binary)])
        let other = await #expect(throws: EventStoreError.self) {
            try await f.store.append(to: "s", events: [NewEvent(id: id, type: "T", data: bytes)])
        }

        // Then the retry is recorded already, and the JSON one conflicts.
        #expect(again.alreadyRecorded)
        #expect(other?.code == .idempotencyConflict)
    }

    @Test("binary data marked personal is refused, and nothing is written")
    func personalRefused() async throws {
        let f = try StoreFixture()
        let refused = await #expect(throws: EventStoreError.self) {
            try await f.store.append(
                to: "s",
                events: [NewEvent(type: "T", data: Data("x".utf8), personal: [PersonalData(subject: "ann", fields: ["name"])], dataFormat: .binary)])
        }
        #expect(refused?.code == .invalidInput)
        #expect(try f.store.headPosition() == 0)
    }
}
