@testable import Apps
import EventStoreCore
import Foundation
import Testing

/// The workout events' hand-written decoder (`FitnessEvent(view:)`, the fast path of
/// `AppStateProjection`) against the `Decodable` one (`FitnessEvent(recorded:)`): the same value
/// for every data both take, the same error for every data they refuse. Rebuild hashes depend
/// on it (an event that fails to decode is passed over, its error recorded).
@Suite("Workout events decoded by hand")
struct FitnessEventBytesTests {
    /// Data of each workout type: the shapes the apps write, and everything around them.
    static let samples: [(type: String, data: String)] = {
        let objects = [
            "{}", "{ }", " {} ", "{\"x\":1}", "[]", "null", "\"\"", "1", "", "{", "{}x", "{\"a\":1,\"a\":2}",
        ]
        var samples: [(String, String)] = []
        for type in FitnessEvent.types.sorted() { for data in objects { samples.append((type, data)) } }
        let pedometer = [
            "{\"steps\":3,\"distance\":2.5}", "{\"distance\":2.5,\"steps\":3}", "{\"steps\":3,\"distance\":2.5,\"more\":[1,{\"a\":null}]}",
            "{\"steps\":3,\"steps\":4,\"distance\":1}", "{\"st\\u0065ps\":3,\"distance\":1}", "{\"steps\":3.5,\"distance\":1}",
            "{\"steps\":3}", "{\"steps\":1e2,\"distance\":1}", "{\"steps\":-0,\"distance\":-0.0}", "{\"steps\":-7,\"distance\":1E3}",
            "{\"steps\":9223372036854775807,\"distance\":1}", "{\"steps\":9223372036854775808,\"distance\":1}",
            "{\"steps\":-9223372036854775808,\"distance\":1}", "{\"steps\":\"3\",\"distance\":1}", "{\"steps\":3,\"distance\":null}",
            "{\"steps\":3,\"distance\":1e400}", "{\"steps\":3,\"distance\":0.1000000000000000055511151231257827}",
            "{ \"steps\" : 3 , \"distance\" : 2 }",
            // Nesting at the limit, and one level past it (the object itself counts)
            "{\"steps\":1,\"distance\":1,\"x\":" + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}",
            "{\"steps\":1,\"distance\":1,\"x\":" + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}", "{\"steps\":3,\"distance\":2,}", "{\"steps\":03,\"distance\":2}",
        ]
        samples += pedometer.map { (PedometerUpdated.eventType, $0) }
        samples += ["{\"distance\":12.25}", "{\"distance\":\"far\"}", "{\"distance\":-1}", "{}"].map { (NessieMoved.eventType, $0) }
        samples += ["{\"goal\":10}", "{\"goal\":-1}", "{\"goal\":true}", "{\"goal\":10.0}", "{\"goal\":10,\"goal\":\"x\"}"].map { (GoalSet.eventType, $0) }
        samples += [
            "{\"alert\":\"goalComplete\"}", "{\"alert\":\"nope\"}", "{\"alert\":\"goal\\u0043omplete\"}", "{\"alert\":1}", "{\"alert\":null}",
        ].map { (AlertTriggered.eventType, $0) }
        samples += [("Unknown", "{}"), ("PedometerUpdate", "{\"steps\":1,\"distance\":1}")]
        return samples
    }()

    @Test("every sample decodes by hand as through Decodable: the same value, or the same error")
    func sameAsDecodable() throws {
        try expectDecodedAlike(FitnessEvent.self, stream: "fitness-ann", Self.samples)
    }

    @Test("the shapes the app writes are taken by hand, not left to Decodable")
    func appShapesTakenByHand() throws {
        // Given each event as the app records it, when the hand path reads it, then it takes it as written
        let events: [FitnessEvent] = [
            .goalSet(GoalSet(goal: 10)), .started(WorkoutStarted()), .paused(WorkoutPaused()), .restarted(WorkoutRestarted()),
            .pedometer(PedometerUpdated(steps: 12, distance: 8.75)), .nessieMoved(NessieMoved(distance: 3.5)), .completed(WorkoutCompleted()),
            .caught(WorkoutCaught()), .alertTriggered(AlertTriggered(alert: .nessie90Percent)),
        ]
        try expectTakenByHand(events, stream: "fitness-ann")
    }
}
