import EventStoreCore
import Foundation
import Testing

@testable import GRPCServer

/// How a DCB event sits in the store and reads back (docs/FORMAT.md, "Events appended over gRPC").
@Suite struct DCBEventsTests {
    @Test func anEventKeepsItsBytesItsUUIDItsMetadataAndItsTrackingInfo() throws {
        // Given an event with bytes that are JSON with white space, an uppercase simple-form
        // uuid, two metadata entries, and tracking info.
        var event = Umadb_V1_Event()
        event.eventType = "type1"
        event.tags = ["tagA", "tagB"]
        event.data = Data("{ \"a\" : 1 }".utf8)
        event.uuid = "6F9619FF8B86D011B42D00C04FC964FF"
        event.metadata = [entry("k", "v"), entry("quote", "say \"hi\"")]
        var tracking = Umadb_V1_TrackingInfo()
        tracking.source = "src"
        tracking.position = 7

        // When it becomes a store event and reads back.
        let new = try DCBEvents.newEvent(event, tracking: tracking)
        let recorded = RecordedEvent(
            position: 3, stream: DCBEvents.stream, version: 3, id: UUID(), type: new.type, data: new.data, metadata: new.metadata,
            recordedAtMicroseconds: 0, tags: new.tags, dataFormat: new.dataFormat)
        let back = DCBEvents.sequenced(recorded)

        // Then the data is binary and byte for byte, the metadata one JSON object, and every
        // field reads back, the uuid normalised to lowercase and hyphens.
        #expect(new.dataFormat == .binary)
        #expect(new.data == Data("{ \"a\" : 1 }".utf8))
        #expect(
            String(decoding: new.metadata, as: UTF8.self)
                == #"{"$uuid":"6f9619ff-8b86-d011-b42d-00c04fc964ff","k":"v","quote":"say \"hi\"","$tracking":{"source":"src","position":7}}"#)
        #expect(back.position == 3)
        #expect(back.event.eventType == "type1")
        #expect(back.event.tags == ["tagA", "tagB"])
        #expect(back.event.data == event.data)
        #expect(back.event.uuid == "6f9619ff-8b86-d011-b42d-00c04fc964ff")
        #expect(back.event.metadata == event.metadata)
        #expect(back.hasTrackingInfo)
        #expect(back.trackingInfo == tracking)
    }

    @Test func anEventOfAnotherFaceReadsWithTheStoresIDAndItsMetadataMembers() {
        // Given an event appended over HTTP, with JSON metadata of a string and a number.
        let id = UUID()
        let recorded = RecordedEvent(
            position: 1, stream: "orders-1", version: 1, id: id, type: "Placed", data: Data(#"{"n":1}"#.utf8),
            metadata: Data(#"{"by":"ann","n":2}"#.utf8), recordedAtMicroseconds: 0, tags: ["order:1"])

        // When it is read over gRPC.
        let back = DCBEvents.sequenced(recorded)

        // Then its uuid is the store's id, and its metadata the members, numbers as their text.
        #expect(back.event.uuid == id.uuidString.lowercased())
        #expect(back.event.metadata == [entry("by", "ann"), entry("n", "2")])
        #expect(!back.hasTrackingInfo)
        #expect(back.event.data == Data(#"{"n":1}"#.utf8))
    }

    @Test func badUUIDsAndReservedOrRepeatedKeysAreRefused() {
        var event = Umadb_V1_Event()
        event.eventType = "t"
        event.uuid = "not-a-uuid"
        #expect(throws: DCBError.self) { try DCBEvents.newEvent(event, tracking: nil) }
        event.uuid = ""
        event.metadata = [entry("$uuid", "x")]
        #expect(throws: DCBError.self) { try DCBEvents.newEvent(event, tracking: nil) }
        event.metadata = [entry("k", "1"), entry("k", "2")]
        #expect(throws: DCBError.self) { try DCBEvents.newEvent(event, tracking: nil) }
        event.metadata = []
        let plain = try? DCBEvents.newEvent(event, tracking: nil)
        #expect(plain?.metadata == Data())
    }

    private func entry(_ key: String, _ value: String) -> Umadb_V1_MetadataEntry {
        var entry = Umadb_V1_MetadataEntry()
        entry.key = key
        entry.value = value
        return entry
    }
}
