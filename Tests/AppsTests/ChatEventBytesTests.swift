@testable import Apps
import EventStoreCore
import Foundation
import Testing

/// The chat events' hand-written decoder (`ChatEvent(view:)`, the fast path of
/// `MessagesProjection`) against the `Decodable` one (`ChatEvent(recorded:)`): the same value for
/// every data both take, the same error for every data they refuse.
@Suite("Chat events decoded by hand")
struct ChatEventBytesTests {
    static let samples: [(type: String, data: String)] = {
        var samples: [(String, String)] = []
        let message = [
            #"{"user":"ann","text":"hi","kind":"said"}"#, #"{"kind":"countdown","text":"3...","user":"ann"}"#,
            #"{"user":"ann","text":"📍 Main St","kind":"location","more":1}"#, #"{"user":"ann","text":{"$forgotten":"chat-user:ann"},"kind":"said"}"#,
            #"{"user":"ann","text":{"$forgotten":1},"kind":"said"}"#, #"{"user":"ann","text":"a\"b\\c\u00e9","kind":"said"}"#,
            #"{"user":"ann","kind":"said"}"#, #"{"user":"ann","text":"hi","kind":"shouted"}"#, #"{"user":1,"text":"hi","kind":"said"}"#,
            #"{"us\u0065r":"ann","text":"hi","kind":"said"}"#, #"{"user":"ann","user":"bob","text":"hi","kind":"said"}"#,
            #"{"user":"ann","text":null,"kind":"said"}"#, "{}", "[]", "null", "",
        ]
        samples += message.map { (MessagePosted.eventType, $0) }
        let presence = [
            #"{"user":"ann","presence":"connected"}"#, #"{"presence":"wentAway","user":"bob"}"#, #"{"user":"ann","presence":"cameBack","x":[]}"#,
            #"{"user":"ann","presence":"left"}"#, #"{"user":"ann"}"#, #"{"user":"ann","presence":"connected","presence":"x"}"#, "{}",
        ]
        samples += presence.map { (PresenceChanged.eventType, $0) }
        samples += [("Other", #"{"user":"ann","presence":"connected"}"#)]
        return samples
    }()

    @Test("every sample decodes by hand as through Decodable: the same value, or the same error")
    func sameAsDecodable() throws {
        try expectDecodedAlike(ChatEvent.self, stream: "chat-main", Self.samples)
    }

    @Test("the shapes the app writes are taken by hand, not left to Decodable")
    func appShapesTakenByHand() throws {
        // Given each event as the app records it, when the hand path reads it, then it takes it as written
        let events: [ChatEvent] = [
            .message(MessagePosted(user: "ann", text: "hello \"you\"", kind: .said)), .message(MessagePosted(user: "bob", text: "🎉 go", kind: .countdown)),
            .presence(PresenceChanged(user: "ann", presence: .wentAway)),
        ]
        try expectTakenByHand(events, stream: "chat-main")
    }
}
