import EventStoreCore
import Foundation
import SwiftProtobuf
import Testing

@testable import GRPCServer

/// Read and Subscribe responses written straight from recorded events are the bytes
/// SwiftProtobuf writes for the messages ``DCBEvents/sequenced(_:)`` builds.
@Suite struct EncodedResponseTests {
    /// Events of every shape a store holds: gRPC's with uuids, metadata and tracking info;
    /// other faces' with JSON metadata and the store's ids; empty fields; sizes whose lengths
    /// take one, two and three bytes; positions of one byte and of ten.
    static let events: [RecordedEvent] = {
        let id = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF") ?? UUID()
        func event(
            _ position: UInt64, stream: String = DCBEvents.stream, type: String = "type1", data: Data = Data("x".utf8),
            metadata: String = "", tags: [String] = ["tagA"]
        ) -> RecordedEvent {
            RecordedEvent(
                position: position, stream: stream, version: 1, id: id, type: type, data: data, metadata: Data(metadata.utf8),
                recordedAtMicroseconds: 0, tags: tags, dataFormat: .binary)
        }
        return [
            event(1),
            event(127, type: "t", data: Data(), tags: []),
            event(128, data: Data(repeating: 7, count: 200), metadata: #"{"$uuid":"6f9619ff-8b86-d011-b42d-00c04fc964ff","k":"v"}"#),
            event(
                .max, data: Data(repeating: 1, count: 70_000),
                metadata: #"{"k":"","":"v","quote":"say \"hi\" é","$tracking":{"source":"src","position":7}}"#, tags: ["a", "b", "ç"]),
            event(5, metadata: #"{"$tracking":{"source":"","position":0}}"#),
            event(6, stream: "orders-1", data: Data(#"{"n":1}"#.utf8), metadata: #"{"by":"ann","n":2,"o":{"a":[1]}}"#, tags: ["order:1"]),
            event(7, stream: "orders-1", metadata: "not json"),
            // Lengths of two bytes in a tag, a metadata value and a tracking source; a tracking
            // position of two bytes.
            event(
                9, type: String(repeating: "t", count: 150),
                metadata: #"{"long":"\#(String(repeating: "v", count: 150))","$tracking":{"source":"\#(String(repeating: "s", count: 130))","position":300}}"#,
                tags: [String(repeating: "g", count: 200), "h"]),
            // Many short members: each takes more bytes as a protobuf entry than as JSON.
            event(8, stream: "orders-1", metadata: "{" + (0..<2_000).map { #""k\#($0)":\#($0 % 10)"# }.joined(separator: ",") + "}"),
        ]
    }()

    @Test func aReadResponseIsSwiftProtobufsBytes() throws {
        for head: UInt64? in [nil, 0, 1, 300, .max] {
            // Given the events, and the response SwiftProtobuf writes for them with this head.
            var message = Umadb_V1_ReadResponse()
            message.events = Self.events.map(DCBEvents.sequenced)
            if let head { message.head = head }
            let expected: [UInt8] = try message.serializedBytes()

            // When the encoder writes them, from views of their records.
            var encoded = EncodedResponse()
            for event in Self.events { try EventView.withView(of: event) { encoded.append($0, estimatedSize: EncodedResponse.estimatedSize(of: $0)) } }
            if let head { encoded.appendHead(head) }

            // Then the bytes are the same, and decode to the same message.
            #expect(encoded.bytes == expected, "head \(String(describing: head))")
            #expect(try Umadb_V1_ReadResponse(serializedBytes: encoded.bytes) == message)
            #expect(encoded.eventCount == Self.events.count)
        }
    }

    @Test func aSubscribeResponseIsSwiftProtobufsBytesOneEventAtATime() throws {
        for event in Self.events {
            // Given one event's SubscribeResponse, as SwiftProtobuf writes it.
            var message = Umadb_V1_SubscribeResponse()
            message.events = [DCBEvents.sequenced(event)]

            // When the encoder writes it, then the bytes are the same.
            var encoded = EncodedResponse()
            try EventView.withView(of: event) { encoded.append($0, estimatedSize: EncodedResponse.estimatedSize(of: $0)) }
            #expect(encoded.bytes == (try message.serializedBytes() as [UInt8]), "position \(event.position)")
            // And the estimate is never below the bytes (messages are bounded by it).
            #expect(encoded.estimatedBytes >= encoded.bytes.count, "position \(event.position)")
        }
    }

    @Test func anEmptyResponseIsEmptyOrItsHead() throws {
        // Given no events, when the encoder writes none, then it is the empty message, or the head alone.
        #expect(EncodedResponse().bytes.isEmpty)
        var withHead = EncodedResponse()
        withHead.appendHead(42)
        var message = Umadb_V1_ReadResponse()
        message.head = 42
        #expect(withHead.bytes == (try message.serializedBytes() as [UInt8]))
    }

    @Test func messagesStayWithinTheBudgetAndABigEventGoesAlone() throws {
        // Given events of 64 bytes of data, one of 5,000, and a budget of 1,000 bytes.
        let events = (1...40).map { position in
            RecordedEvent(
                position: UInt64(position), stream: DCBEvents.stream, version: 1, id: UUID(), type: "t",
                data: Data(repeating: 1, count: position == 20 ? 5_000 : 64), metadata: Data(), recordedAtMicroseconds: 0,
                tags: ["tag"], dataFormat: .binary)
        }
        // When they are split into messages.
        var responses = EncodedResponses(budgetBytes: 1_000)
        for event in events { try EventView.withView(of: event) { responses.append($0) } }
        let messages = responses.takeFull() + [responses.takeCurrent()]

        // Then every message but the big event's stays within the budget, the big one goes
        // alone, and together they hold every event once, in order.
        var positions: [UInt64] = []
        for message in messages {
            let decoded = try Umadb_V1_SubscribeResponse(serializedBytes: message.bytes)
            positions += decoded.events.map(\.position)
            if decoded.events.contains(where: { $0.position == 20 }) {
                #expect(decoded.events.count == 1, "the big event shares its message")
            } else {
                #expect(message.bytes.count <= 1_000, "a message of \(message.bytes.count) bytes")
            }
        }
        #expect(positions == Array(1...40))
        #expect(responses.appendedCount == 40)
        #expect(responses.appendedBytes == messages.reduce(0) { $0 + $1.estimatedBytes })
        #expect(messages.count > 3)
        #expect(responses.takeFull().isEmpty && responses.takeCurrent().isEmpty)
    }
}
