import Commands
import EventStore
import Foundation
import Projections

/// S3's workload: a realistic mix of the three apps' events, made by their own deciders on
/// in-memory state, so every event is one the backend could have recorded.
/// About 60% workout and alert events, 25% chat, 15% campground.
struct DomainWorkload {
    var random: SplitMix
    var workouts: [Workout]
    var queues: [AlertQueue]
    var campgrounds: [Campground]
    let rooms = 100

    init(users: Int = 1000, campgrounds: Int = 200, seed: UInt64 = 7) {
        random = SplitMix(seed: seed)
        workouts = Array(repeating: Workout(), count: users)
        queues = Array(repeating: AlertQueue(), count: users)
        self.campgrounds = Array(repeating: Campground(), count: campgrounds)
    }

    /// The next events, as parts of an append (usually one or two).
    mutating func next() -> [StreamAppend] {
        let roll = random.next(100)
        if roll < 60 { return fitness() }
        if roll < 85 { return chat() }
        return campground()
    }

    private mutating func fitness() -> [StreamAppend] {
        let user = random.next(workouts.count)
        let workout = workouts[user]
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
        guard let decision = try? FitnessDecider.decide(command, workout: workout, queue: queues[user]) else { return [] }
        decision.workout.forEach { workouts[user].apply($0) }
        decision.alerts.forEach { queues[user].apply($0) }
        var parts = [StreamAppend(stream: DomainStreams.fitness("user-\(user)"), events: decision.workout.map(\.newEvent))]
        if !decision.alerts.isEmpty {
            parts.append(StreamAppend(stream: DomainStreams.alerts("user-\(user)"), events: decision.alerts.map(\.newEvent)))
        }
        // Users clear their alerts now and then.
        if queues[user].count > 3, let first = queues[user].top,
            let events = try? AlertDecider.decide(.clear(first.text), queue: queues[user])
        {
            events.forEach { queues[user].apply($0) }
            parts.append(StreamAppend(stream: DomainStreams.alerts("user-\(user)"), events: events.map(\.newEvent)))
        }
        return parts
    }

    private mutating func chat() -> [StreamAppend] {
        let user = "user-\(random.next(workouts.count))"
        let room = "room-\(random.next(rooms))"
        let command: ChatCommand
        switch random.next(20) {
        case 0: command = .presence(.connected)
        case 1: command = .presence(.wentAway)
        case 2: command = .shareLocation("Loch Ness, bay \(random.next(50))")
        default: command = .say("Message \(random.next(1_000_000)) about the race and the weather today")
        }
        guard let event = try? ChatDecider.decide(command, user: user) else { return [] }
        return [StreamAppend(stream: DomainStreams.chat(room), events: [event.newEvent])]
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
        guard let event = try? CampgroundDecider.decide(command, campground: state) else { return [] }
        campgrounds[index].apply(event)
        return [StreamAppend(stream: DomainStreams.campground("camp-\(index)"), events: [event.newEvent])]
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

/// A small seeded generator (SplitMix64).
struct SplitMix {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func nextRaw() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound.
    mutating func next(_ bound: Int) -> Int { Int(nextRaw() % UInt64(max(bound, 1))) }
}
