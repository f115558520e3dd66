import Apps
import Commands
import EventStore
import Foundation
import Testing
import TestSupport

/// For every app: the state folded from a snapshot and the events after it equals the state
/// folded from the first event, over random command sequences and with snapshots written often.
@Suite("The apps' snapshots")
struct SnapshotReplayTests {
    /// The state through the handler's path for any `StreamDecider`: no snapshot, every event.
    func folded<D: StreamDecider>(_ handler: CommandHandler, _ decider: D) async throws -> D.State {
        try await handler.state(of: decider).state
    }

    @Test("random commands with a snapshot every few events: snapshot + tail == the whole fold, for every app", arguments: [UInt64(5), 17])
    func snapshotPlusTail(seed: UInt64) async throws {
        let f = try DomainFixture(snapshotInterval: 3)
        let b = f.backend
        var random = SeededGenerator(seed: seed)
        for step in 0..<300 {
            let user = ["ann", "bob"].randomElement(using: &random) ?? "ann"
            do {
                switch Int.random(in: 0..<16, using: &random) {
                case 0: _ = try await b.fitness(.setGoal(Int.random(in: 1...60, using: &random)), user: user)
                case 1, 2: _ = try await b.fitness(.start, user: user)
                case 3: _ = try await b.fitness(.restart, user: user)
                case 4, 5: _ = try await b.fitness(.walk(steps: Int.random(in: 0...15, using: &random), distance: Double(Int.random(in: 0...9, using: &random))), user: user)
                case 6: _ = try await b.fitness(.moveNessie(Double(Int.random(in: 0...40, using: &random))), user: user)
                case 7: _ = try await b.alerts(.post(text: ["Drink", "Stretch"].randomElement(using: &random) ?? "Drink", severity: .good), user: user)
                case 8: _ = try await b.alerts(.clearAll, user: user)
                case 9: _ = try await b.campground(.addCamper(fullName: "Camper \(step)", phoneNumber: "555"), campground: user)
                case 10: _ = try await b.campground(.addSite(number: Int.random(in: 1...6, using: &random), electricity: true, water: false), campground: user)
                case 11:
                    _ = try await b.campground(.reserve(
                        site: Int.random(in: 1...6, using: &random), camperId: "C\(Int.random(in: 1...3, using: &random))",
                        date: CivilDate(day: 20_600 + Int64.random(in: 0...20, using: &random)), nights: Int.random(in: -1...4, using: &random)),
                        campground: user)
                case 12: _ = try await b.campground(.cancel(reservationId: "R\(Int.random(in: 1...5, using: &random))"), campground: user)
                case 13: _ = try await b.color(.press(["1", "a", "F", "backspace", "clear"].randomElement(using: &random) ?? "clear"), calculator: user)
                case 14: _ = try await b.color(.set(["#006636AA", "abc", "ff0000"].randomElement(using: &random) ?? "abc"), calculator: user)
                default: _ = try await f.store.append(to: "fitness-\(user)", events: [NewEvent(type: "PedometerUpdated", data: Data(#"{"steps":"x"}"#.utf8))])
                }
            } catch is AppError {
                // Refusals are part of the mix.
            }
            // Now and then, compare every app's state both ways.
            if step % 25 == 24 {
                for user in ["ann", "bob"] {
                    #expect(try await b.fitnessState(user: user) == (try await folded(b.handler, FitnessDecider(user: user))), "fitness \(user) at \(step)")
                    #expect(try await b.alertQueue(user: user) == (try await folded(b.handler, AlertDecider(user: user))), "alerts \(user) at \(step)")
                    #expect(try await b.campground(named: user) == (try await folded(b.handler, CampgroundDecider(campground: user))), "campground \(user) at \(step)")
                    #expect(try await b.colorDisplay(calculator: user) == (try await folded(b.handler, ColorDecider(calculator: user))), "color \(user) at \(step)")
                }
            }
        }
        let snapshots = try await Snapshots.list(in: f.store)
        #expect(Set(snapshots.map(\.decider)) == ["fitness", "alerts", "campground", "color"])
    }
}
