import Apps
import Commands
import EventStore
import EventStoreTesting
import Foundation
import Projections

/// S3's workload: a realistic mix of the three apps' events, made by their own deciders on
/// in-memory state, so every event is one the backend could have recorded.
/// About 60% workout and alert events, 25% chat, 15% campground.
struct DomainWorkload {
    var random: SplitMix
    var fitness: [FitnessState]
    var campgrounds: [Campground]
    let rooms = 100

    init(users: Int = 1000, campgrounds: Int = 200, seed: UInt64 = 7) {
        random = SplitMix(seed: seed)
        fitness = Array(repeating: FitnessState(), count: users)
        self.campgrounds = Array(repeating: Campground(), count: campgrounds)
    }

    /// The next events, as parts of an append (usually one or two).
    mutating func next() -> [StreamAppend] {
        let roll = random.next(100)
        if roll < 60 { return fitnessEvents() }
        if roll < 85 { return chat() }
        return campground()
    }

    /// Decides `command` on `state`, folds what it decided into it, and returns the parts of the
    /// append (consecutive events of a stream together), or none when it is refused.
    private static func run<D: StreamDecider>(_ command: D.Command, _ decider: D, _ state: inout D.State) -> [StreamAppend] {
        guard let events = try? decider.decide(command, state: state) else { return [] }
        var parts: [StreamAppend] = []
        for event in events {
            decider.evolve(&state, with: event)
            guard let new = try? event.newEvent() else { return [] }
            let stream = decider.stream(for: event)
            if let last = parts.indices.last, parts[last].stream == stream {
                parts[last].events.append(new)
            } else {
                parts.append(StreamAppend(stream: stream, events: [new]))
            }
        }
        return parts
    }

    private mutating func fitnessEvents() -> [StreamAppend] {
        let user = random.next(fitness.count)
        let workout = fitness[user].workout
        let command: FitnessCommand
        switch workout.status {
        case .notStarted: command = workout.goal == nil ? .setGoal(2000 + random.next(8000)) : .start
        case .paused: command = .start
        case .completed, .caught: command = .restart
        case .inProgress:
            switch random.next(20) {
            case 0: command = .pause
            case 1...4: command = .moveNessie(workout.distance * Double(30 + random.next(72)) / 100)
            default: command = .walk(steps: 20 + random.next(180), distance: Double(10 + random.next(140)))
            }
        }
        var parts = Self.run(command, FitnessDecider(user: "user-\(user)"), &fitness[user])
        // Users clear their alerts now and then.
        if fitness[user].queue.count > 3, let first = fitness[user].queue.top {
            parts += Self.run(.clear(first.text), AlertDecider(user: "user-\(user)"), &fitness[user].queue)
        }
        return parts
    }

    private mutating func chat() -> [StreamAppend] {
        let user = "user-\(random.next(fitness.count))"
        let room = "room-\(random.next(rooms))"
        let command: ChatCommand
        switch random.next(20) {
        case 0: command = .presence(.connected)
        case 1: command = .presence(.wentAway)
        case 2: command = .shareLocation("Loch Ness, bay \(random.next(50))")
        default: command = .say("Message \(random.next(1_000_000)) about the race and the weather today")
        }
        var none: Void = ()
        return Self.run(command, ChatDecider(room: room, user: user), &none)
    }

    private mutating func campground() -> [StreamAppend] {
        let index = random.next(campgrounds.count)
        let state = campgrounds[index]
        let command: CampgroundCommand
        if state.camperCount < 5 || random.next(10) == 0 {
            command = .addCamper(fullName: "Camper \(state.camperCount + 1)", phoneNumber: "555-\(random.next(10_000))")
        } else if state.sites.count < 20 || random.next(40) == 0 {
            command = .addSite(number: state.nextSiteNumber, electricity: random.next(2) == 0, water: random.next(2) == 0)
        } else if random.next(8) == 0, let reserved = state.reservations.last(where: { $0.status == .reserved }) {
            command = .cancel(reservationId: reserved.id)
        } else {
            let site = state.sites.keys.sorted()[random.next(state.sites.count)]
            command = .reserve(
                site: site, camperId: "C\(1 + random.next(state.camperCount))", date: CivilDate(day: 20_600 + Int64(random.next(365))),
                nights: random.next(9) - 1)
        }
        return Self.run(command, CampgroundDecider(campground: "camp-\(index)"), &campgrounds[index])
    }

    /// Generates about `count` events and appends them to `store` in appends of about 1,000.
    static func fill(_ store: EventStore, count: Int, seed: UInt64 = 7) async throws {
        var workload = DomainWorkload(seed: seed)
        var pending: [StreamAppend] = []
        var pendingEvents = 0
        var total = 0
        while total < count {
            let parts = workload.next()
            pending.append(contentsOf: parts)
            let added = parts.reduce(0) { $0 + $1.events.count }
            pendingEvents += added
            total += added
            if pendingEvents >= 1000 || total >= count {
                _ = try await store.append(pending)
                pending = []
                pendingEvents = 0
            }
        }
    }
}

/// The tests' seeded generator (SplitMix64), with a bounded draw.
typealias SplitMix = SeededGenerator

extension SeededGenerator {
    /// A number in 0..<bound.
    mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}
