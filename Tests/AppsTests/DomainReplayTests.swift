import Apps
import Commands
import EventStore
import Foundation
import Projections
import Testing
import TestSupport

/// A long random mix of commands across the three apps, caught up now and then: a rebuild gives
/// the same hash as the live state, for every domain projection.
@Suite("Deterministic replay across the domains")
struct DomainReplayTests {
    @Test("random commands, then rebuild: identical hashes", arguments: [UInt64(3), 11, 97])
    func replay(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let f = try DomainFixture()
        let b = f.backend
        let runner = try await f.runner()
        let users = ["ann", "bob"]
        let rooms = ["main", "side"]
        for step in 0..<250 {
            let user = users.randomElement(using: &random) ?? "ann"
            let room = rooms.randomElement(using: &random) ?? "main"
            let roll = Int.random(in: 0..<22, using: &random)
            do {
                switch roll {
                case 0: _ = try await b.fitness(.setGoal(Int.random(in: 1...60, using: &random)), user: user)
                case 1, 2: _ = try await b.fitness(.start, user: user)
                case 3: _ = try await b.fitness(.pause, user: user)
                case 4: _ = try await b.fitness(.restart, user: user)
                case 5, 6, 7: _ = try await b.fitness(.walk(steps: Int.random(in: 0...15, using: &random), distance: Double(Int.random(in: 0...9, using: &random))), user: user)
                case 8: _ = try await b.fitness(.moveNessie(Double(Int.random(in: 0...40, using: &random))), user: user)
                case 9: _ = try await b.alerts(.post(text: ["Drink", "Stretch", "Rest"].randomElement(using: &random) ?? "Drink", severity: .good), user: user)
                case 10: _ = try await b.alerts(.clear(AlertName.allCases.randomElement(using: &random)?.rawValue ?? "goalComplete"), user: user)
                case 11: _ = try await b.alerts(.clearAll, user: user)
                case 12: _ = try await b.chat(.say("message \(step)"), user: user, room: room)
                case 13: _ = try await b.chat(.presence(Presence.allCases.randomElement(using: &random) ?? .connected), user: user, room: room)
                case 14: f.clock.advance(by: .seconds(Int64.random(in: 1...200, using: &random)))
                case 15: _ = try await b.campground(.addCamper(fullName: "Camper \(step)", phoneNumber: "555-\(step)"))
                case 16: _ = try await b.campground(.addSite(number: Int.random(in: 1...8, using: &random), electricity: true, water: false))
                case 17:
                    _ = try await b.campground(.reserve(
                        site: Int.random(in: 1...8, using: &random), camperId: "C\(Int.random(in: 1...4, using: &random))",
                        date: CivilDate(day: 20_600 + Int64.random(in: 0...20, using: &random)), nights: Int.random(in: -1...4, using: &random)))
                case 18: _ = try await b.campground(.cancel(reservationId: "R\(Int.random(in: 1...6, using: &random))"))
                case 19: _ = try await b.color(.press(["1", "a", "F", "backspace", "clear"].randomElement(using: &random) ?? "clear"), calculator: user)
                case 20: _ = try await b.color(.set(["#006636AA", "abc", "ff0000"].randomElement(using: &random) ?? "abc"), calculator: user)
                default: _ = try await b.campground(.deleteSite(Int.random(in: 1...8, using: &random)))
                }
            } catch is AppError {
                // Refusals are part of the mix: they record nothing (or an invalid reservation).
            }
            if Int.random(in: 0..<25, using: &random) == 0 { try await runner.catchUp() }
        }
        try await runner.catchUp()
        let head = try f.store.headPosition()
        #expect(head > 100, "seed \(seed) recorded only \(head) events")
        for projection in AppCatalog.apps {
            let live = try runner.storedHash(of: projection.name)
            let asOfHead = try StateHash.of(projection, in: try await runner.state(of: projection.name, asOf: head).reader)
            let rebuilt = try await runner.rebuild([projection.name])[0].hash
            #expect(live == rebuilt, "seed \(seed), \(projection.name)")
            #expect(live == asOfHead, "seed \(seed), \(projection.name)")
        }
    }
}
