@testable import Apps
import Foundation
import Projections
import Testing

/// The fields of `ChatMessage` and `LastSeen`, in their order, encoded through `Codable`: what
/// their hand-written row encodings must match byte for byte (stored states and their hashes
/// depend on it).
private struct CodableChatMessage: Codable, RowValue, Equatable {
    var id: UUID
    var user: String?
    var text: String
    var date: Int64
}

private struct CodableLastSeen: Codable, RowValue, Equatable {
    var at: Int64
    var isAway: Bool
}

@Suite("Chat rows")
struct ChatRowTests {
    @Test("the hand-written encodings are the Codable ones, byte for byte, and decode back")
    func sameBytes() throws {
        let id = UUID(uuid: (1, 2, 3, 4, 5, 6, 0x70, 8, 0x89, 10, 11, 12, 13, 14, 15, 0))
        let messages = [
            ChatMessage(id: id, user: "ann", text: "hi \u{0} 🎉", date: 1_767_225_600_000_000),
            ChatMessage(id: id, user: nil, text: "bob went away", date: -1), ChatMessage(id: id, user: "", text: "", date: .max),
        ]
        for message in messages {
            // Given a message, when encoded by hand and through Codable, then the bytes agree and decode back
            let codable = CodableChatMessage(id: message.id, user: message.user, text: message.text, date: message.date)
            #expect(message.encoded == codable.encoded)
            #expect(try ChatMessage(decoding: message.encoded) == message)
            #expect(try CodableChatMessage(decoding: message.encoded) == codable)
        }
        for seen in [LastSeen(at: 0, isAway: true), LastSeen(at: .min, isAway: false)] {
            let codable = CodableLastSeen(at: seen.at, isAway: seen.isAway)
            #expect(seen.encoded == codable.encoded)
            #expect(try LastSeen(decoding: seen.encoded) == seen)
        }
        // A stored id of another length is refused, as through Codable
        var writer = RowWriter()
        writer.write(bytes: [1, 2, 3])
        writer.write(String?.none)
        writer.write("x")
        writer.write(Int64(0))
        #expect(throws: RowDecodingError.self) { try ChatMessage(decoding: writer.bytes) }
    }
}
