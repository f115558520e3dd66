import Apps
import Commands
import EventStore
import EventStoreTesting
import Foundation
import Projections

/// A store on one backend with the apps' backend over it; the store's clock reads the test
/// clock (from 2026-01-01T00:00:00Z), so recorded dates follow it exactly, and ids are sequential.
final class DomainFixture: Sendable {
    let log: LogFixture
    let clock: TestClock
    let backend: AppBackend
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    var store: any EventLog { log.log }

    init(log: LogFixture, clock: TestClock, maximumAttempts: Int, snapshotInterval: Int) throws {
        self.log = log
        self.clock = clock
        backend = try AppBackend(
            store: log.log, clock: clock,
            configuration: CommandHandler.Configuration(maximumAttempts: maximumAttempts, snapshotInterval: snapshotInterval))
    }

    /// The store's clock: the start plus the test clock's offset.
    static func now(_ clock: TestClock) -> @Sendable () -> Date {
        {
            let offset = clock.now.offset.components
            return start.addingTimeInterval(Double(offset.seconds) + Double(offset.attoseconds) / 1e18)
        }
    }

    /// A runner of the apps' projections.
    func runner() async throws -> ProjectionRunner {
        try await ProjectionRunner(store: store, projections: AppCatalog.apps)
    }
}

/// Runs `body` with a fresh domain fixture on `backend`, and removes its store afterwards.
func withDomain<R>(
    _ backend: Backend, maximumAttempts: Int = 5, snapshotInterval: Int = 100, _ body: (DomainFixture) async throws -> R
) async throws -> R {
    let clock = TestClock()
    return try await withLog(backend, now: DomainFixture.now(clock), upcasters: AppCatalog.upcasters) { f in
        try await body(try DomainFixture(log: f, clock: clock, maximumAttempts: maximumAttempts, snapshotInterval: snapshotInterval))
    }
}

/// Seeded random traffic of every app, as a user would make it: commands through the apps'
/// backend (refusals included: they record nothing, or an invalid reservation), the test clock
/// moving now and then. `afterEach` runs after each step (to catch up a runner now and then).
func domainTraffic(
    _ b: AppBackend, clock: TestClock, seed: UInt64, steps: Int = 250, afterEach: (inout SeededGenerator) async throws -> Void = { _ in }
) async throws {
    var random = SeededGenerator(seed: seed)
    let users = ["ann", "bob"]
    let rooms = ["main", "side"]
    for step in 0..<steps {
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
            case 14: clock.advance(by: .seconds(Int64.random(in: 1...200, using: &random)))
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
        try await afterEach(&random)
    }
}
