@testable import Apps
import EventStoreCore
import Foundation
import Testing

/// The alert events' hand-written decoder (`AlertEvent(view:)`, the fast path of
/// `AlertsProjection`) against the `Decodable` one (`AlertEvent(recorded:)`).
@Suite("Alert events decoded by hand")
struct AlertEventBytesTests {
    static let samples: [(type: String, data: String)] = {
        var samples: [(String, String)] = []
        let posted = [
            #"{"name":"goalComplete","text":"Done!","severity":"good"}"#, #"{"text":"Stretch!","severity":"good"}"#,
            #"{"name":null,"text":"Stretch!","severity":"bad"}"#, #"{"severity":"bad","text":"x","name":"nessie50Percent","more":[]}"#,
            #"{"name":"nope","text":"x","severity":"good"}"#, #"{"name":1,"text":"x","severity":"good"}"#, #"{"text":"x","severity":"ugly"}"#,
            #"{"text":"x"}"#, #"{"severity":"good"}"#, #"{"text":1,"severity":"good"}"#, #"{"te\u0078t":"x","severity":"good"}"#,
            #"{"name":"goalComplete","name":"nope","text":"x","severity":"good"}"#, #"{"alert":{"text":"x","severity":"good"}}"#, "{}", "[]", "",
        ]
        samples += posted.map { (AlertPosted.eventType, $0) }
        samples += [#"{"text":"Stretch!"}"#, #"{"text":null}"#, "{}", #"{"text":"a","text":1}"#].map { (AlertCleared.eventType, $0) }
        samples += ["{}", "{ }", #"{"x":1}"#, "[]", "null", ""].map { (AllAlertsCleared.eventType, $0) }
        samples += [("Other", "{}")]
        return samples
    }()

    @Test("every sample decodes by hand as through Decodable: the same value, or the same error")
    func sameAsDecodable() throws {
        try expectDecodedAlike(AlertEvent.self, stream: "alerts-ann", Self.samples)
    }

    @Test("the shapes the apps write are taken by hand, not left to Decodable")
    func appShapesTakenByHand() throws {
        // Given each event as the apps record it, when the hand path reads it, then it takes it as written
        let events: [AlertEvent] = [
            .posted(AlertPosted(alert: Alert(name: .milestone25Percent, text: "You are 25% to goal. Keep going!", severity: .good))),
            .posted(AlertPosted(alert: Alert(text: "Stretch \"now\"", severity: .bad))), .cleared(AlertCleared(text: "Stretch!")),
            .allCleared(AllAlertsCleared()),
        ]
        try expectTakenByHand(events, stream: "alerts-ann")
    }
}
