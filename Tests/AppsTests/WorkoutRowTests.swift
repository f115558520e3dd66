@testable import Apps
import Projections
import Testing

/// The fields of `Workout`, in its order, encoded through `Codable`: what its hand-written row
/// encoding must match byte for byte (stored states and their hashes depend on it).
private struct CodableWorkout: Codable, RowValue, Equatable {
    var status: WorkoutStatus
    var goal: Int?
    var steps: Int
    var distance: Double
    var nessie: Double
    var sentAlerts: [AlertName]
}

@Suite("Workout rows")
struct WorkoutRowTests {
    static let samples: [Workout] = {
        var empty = Workout()
        empty.status = .notStarted
        var busy = Workout()
        busy.status = .inProgress
        busy.goal = 9_223_372_036_854_775_807
        busy.steps = -3
        busy.distance = 12.5
        busy.nessie = .nan
        busy.sentAlerts = [.nessie50Percent, .milestone25Percent]
        var caught = Workout()
        caught.status = .caught
        caught.goal = 0
        caught.sentAlerts = AlertName.allCases
        return [empty, busy, caught]
    }()

    @Test("the hand-written encoding is the Codable one, byte for byte, and decodes back")
    func sameBytes() throws {
        for workout in Self.samples {
            let mirror = CodableWorkout(
                status: workout.status, goal: workout.goal, steps: workout.steps, distance: workout.distance,
                nessie: workout.nessie, sentAlerts: workout.sentAlerts)
            #expect(workout.encoded == mirror.encoded)
            let decoded = try Workout(decoding: workout.encoded)
            #expect(decoded.encoded == workout.encoded)
            #expect(try CodableWorkout(decoding: workout.encoded).encoded == mirror.encoded)
        }
    }

    @Test("an unknown state or alert name is a decoding error, not a trap")
    func unknownNames() throws {
        var writer = RowWriter()
        writer.write("sleeping")
        #expect(throws: RowDecodingError.self) { try Workout(decoding: writer.bytes) }
        var mirror = CodableWorkout(status: .paused, goal: nil, steps: 1, distance: 1, nessie: 0, sentAlerts: [])
        var bytes = mirror.encoded
        #expect(try Workout(decoding: bytes).status == .paused)
        mirror.sentAlerts = [.goalComplete]
        bytes = mirror.encoded
        let name = Array(AlertName.goalComplete.rawValue.utf8)
        let start = bytes.count - name.count
        bytes[start] = UInt8(ascii: "X")
        #expect(throws: RowDecodingError.self) { try Workout(decoding: bytes) }
    }
}
