import EventStore
import Projections

/// The three apps' backend: their commands, run against an event store. Each command loads
/// the state of the streams it touches, decides with a pure decider, and appends atomically,
/// retrying on a version conflict. Keys (users, rooms, campgrounds) default to "default".
public final class Backend: Sendable {
    /// The store the events go to.
    public let store: EventStore
    /// The clock the chat countdown waits on.
    public let clock: any Clock<Duration>
    private let handler: CommandHandler

    /// A backend over `store`; `clock` paces countdowns (inject a test clock in tests).
    public init(store: EventStore, clock: any Clock<Duration> = ContinuousClock(), maximumAttempts: Int = 5) {
        self.store = store
        self.clock = clock
        handler = CommandHandler(store: store, maximumAttempts: max(1, maximumAttempts))
    }

    // MARK: Fitness and alerts

    /// What a workout command did: the workout and queue after it, and the events recorded.
    public struct FitnessOutcome: Sendable, Equatable {
        public let workout: Workout
        public let queue: AlertQueue
        public let recorded: [RecordedEvent]
    }

    /// Runs a workout command for `user` (see ``FitnessDecider``).
    public func fitness(_ command: FitnessCommand, user: String = DomainStreams.defaultKey) async throws -> FitnessOutcome {
        try Validate.key(user, "user")
        let workoutStream = DomainStreams.fitness(user)
        let alertStream = DomainStreams.alerts(user)
        let (state, recorded) = try await handler.run([workoutStream, alertStream]) { loaded in
            var workout = try Self.fold(loaded[workoutStream], into: Workout()) { $0.apply(try FitnessEvent($1)) }
            var queue = try Self.fold(loaded[alertStream], into: AlertQueue()) { $0.apply(try AlertEvent($1)) }
            let decision = try FitnessDecider.decide(command, workout: workout, queue: queue)
            decision.workout.forEach { workout.apply($0) }
            decision.alerts.forEach { queue.apply($0) }
            return CommandHandler.Decision(
                appends: [(workoutStream, decision.workout.map(\.newEvent)), (alertStream, decision.alerts.map(\.newEvent))],
                value: (workout, queue))
        }
        return FitnessOutcome(workout: state.0, queue: state.1, recorded: recorded)
    }

    /// What an alert command did: the queue after it, and the events recorded (none when a
    /// posted text was queued already, or there was nothing to clear).
    public struct AlertOutcome: Sendable, Equatable {
        public let queue: AlertQueue
        public let recorded: [RecordedEvent]
    }

    /// Runs an alert command for `user` (see ``AlertDecider``).
    public func alerts(_ command: AlertCommand, user: String = DomainStreams.defaultKey) async throws -> AlertOutcome {
        try Validate.key(user, "user")
        let stream = DomainStreams.alerts(user)
        let (queue, recorded) = try await handler.run([stream]) { loaded in
            var queue = try Self.fold(loaded[stream], into: AlertQueue()) { $0.apply(try AlertEvent($1)) }
            let events = try AlertDecider.decide(command, queue: queue)
            events.forEach { queue.apply($0) }
            return CommandHandler.Decision(appends: [(stream, events.map(\.newEvent))], value: queue)
        }
        return AlertOutcome(queue: queue, recorded: recorded)
    }

    /// The user's workout as its stream tells it.
    public func workout(user: String = DomainStreams.defaultKey) throws -> Workout {
        try Self.fold(try store.readStream(DomainStreams.fitness(user)), into: Workout()) { $0.apply(try FitnessEvent($1)) }
    }

    /// The user's alert queue as its stream tells it.
    public func alertQueue(user: String = DomainStreams.defaultKey) throws -> AlertQueue {
        try Self.fold(try store.readStream(DomainStreams.alerts(user)), into: AlertQueue()) { $0.apply(try AlertEvent($1)) }
    }

    // MARK: Chat

    /// Records a chat command of `user` in `room` and returns the recorded event.
    public func chat(_ command: ChatCommand, user: String, room: String = DomainStreams.defaultKey) async throws -> RecordedEvent {
        try Validate.key(room, "room")
        let event = try ChatDecider.decide(command, user: user)
        let result = try await store.append(to: DomainStreams.chat(room), events: [event.newEvent])
        guard let recorded = try store.event(at: result.positions[0]) else {
            throw EventStoreError(.damaged, "The message just recorded at position \(result.positions[0]) cannot be read back.")
        }
        return recorded
    }

    /// Counts down to `text`: "3...", "2...", "1...", then "🎉 TEXT", each recorded as a message of
    /// `user`, `interval` apart on the backend's clock. `onMessage` sees each one as it is
    /// recorded. Cancelling the task stops the countdown (what was recorded stays); an empty
    /// text records nothing and throws ``CommandError/Code/invalidInput``.
    @discardableResult
    public func countdown(
        to text: String, user: String, room: String = DomainStreams.defaultKey, interval: Duration = .seconds(1),
        onMessage: @Sendable (RecordedEvent) -> Void = { _ in }
    ) async throws -> [RecordedEvent] {
        try Validate.key(user, "user")
        try Validate.key(room, "room")
        try Validate.text(text, "countdown text")
        var recorded: [RecordedEvent] = []
        for (index, step) in ChatDecider.countdown(to: text).enumerated() {
            if index > 0 {
                do {
                    try await clock.sleep(for: interval)
                } catch is CancellationError {
                    return recorded
                }
            }
            if Task.isCancelled { return recorded }
            let event = MessagePosted(user: user, text: step, kind: .countdown)
            let result = try await store.append(to: DomainStreams.chat(room), events: [event.newEvent])
            if let message = try store.event(at: result.positions[0]) {
                recorded.append(message)
                onMessage(message)
            }
        }
        return recorded
    }

    // MARK: Campground

    /// What a campground command did: the campground after it and the event recorded.
    public struct CampgroundOutcome: Sendable, Equatable {
        public let campground: Campground
        public let recorded: [RecordedEvent]
        /// The reservation recorded or cancelled, for those commands.
        public let reservation: Reservation?
        /// The camper added, for add-camper.
        public let camper: Camper?
    }

    /// Runs a campground command (see ``CampgroundDecider``). A reservation recorded as
    /// "Invalid" is recorded, then thrown as ``CommandError/Code/recordedInvalid`` with its
    /// problem, the error domain "CampingManager" and code 5 (invalid number of days) or 6
    /// (site already reserved), and the recorded events.
    public func campground(
        _ command: CampgroundCommand, campground name: String = DomainStreams.defaultKey
    ) async throws -> CampgroundOutcome {
        try Validate.key(name, "campground")
        let stream = DomainStreams.campground(name)
        let (state, recorded) = try await handler.run([stream]) { loaded in
            var campground = try Self.fold(loaded[stream], into: Campground()) { $0.apply(try CampgroundEvent($1)) }
            let event = try CampgroundDecider.decide(command, campground: campground)
            campground.apply(event)
            return CommandHandler.Decision(appends: [(stream, [event.newEvent])], value: (campground, event))
        }
        let (campground, event) = state
        switch event {
        case let .reservationRecorded(reservation) where reservation.status == .invalid:
            let problem = reservation.problem ?? CampgroundDecider.invalidNights.problem
            let code = problem == CampgroundDecider.siteTaken.problem ? CampgroundDecider.siteTaken.code : CampgroundDecider.invalidNights.code
            throw CommandError(
                .recordedInvalid, "\(problem) (reservation \(reservation.reservationId) recorded as Invalid; \(CampgroundDecider.errorDomain) error \(code)).",
                domain: CampgroundDecider.errorDomain, domainCode: code, recordedEvents: recorded)
        case let .reservationRecorded(reservation):
            return CampgroundOutcome(campground: campground, recorded: recorded, reservation: Reservation(reservation), camper: nil)
        case let .reservationCancelled(cancelled):
            return CampgroundOutcome(
                campground: campground, recorded: recorded, reservation: campground.reservation(cancelled.reservationId), camper: nil)
        case let .camperAdded(added):
            return CampgroundOutcome(
                campground: campground, recorded: recorded, reservation: nil,
                camper: Camper(id: added.camperId, fullName: added.fullName, phoneNumber: added.phoneNumber))
        default:
            return CampgroundOutcome(campground: campground, recorded: recorded, reservation: nil, camper: nil)
        }
    }

    /// The campground as its stream tells it.
    public func campground(named name: String = DomainStreams.defaultKey) throws -> Campground {
        try Self.fold(try store.readStream(DomainStreams.campground(name)), into: Campground()) { $0.apply(try CampgroundEvent($1)) }
    }

    // MARK: Folding

    /// Folds events into a state with `apply`.
    static func fold<State>(
        _ events: [RecordedEvent]?, into initial: State, _ apply: (inout State, RecordedEvent) throws -> Void
    ) throws -> State {
        var state = initial
        for event in events ?? [] { try apply(&state, event) }
        return state
    }
}
