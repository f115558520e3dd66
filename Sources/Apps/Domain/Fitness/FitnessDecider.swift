import Commands
import EventStoreCore

/// What a user can do with a workout.
public enum FitnessCommand: Sendable, Equatable {
    case setGoal(Int)
    case start
    case pause
    case restart
    /// Pedometer increments: steps and meters walked since the last report.
    case walk(steps: Int, distance: Double)
    /// Nessie's distance, in meters, as she advances.
    case moveNessie(Double)
}

/// A user's workout and alert queue: what a workout command decides on.
public struct FitnessState: Sendable, Equatable, Codable {
    public var workout: Workout
    public var queue: AlertQueue

    public init(workout: Workout = Workout(), queue: AlertQueue = AlertQueue()) {
        self.workout = workout
        self.queue = queue
    }
}

/// An event a workout command records: in the user's workout stream, or in their alert queue's.
public enum FitnessRecord: RecordableEvent, Equatable {
    case workout(FitnessEvent)
    case alert(AlertEvent)

    public init(recorded event: RecordedEvent) throws(EventDecodingError) {
        if AlertEvent.types.contains(event.type) {
            self = .alert(try AlertEvent(recorded: event))
        } else {
            self = .workout(try FitnessEvent(recorded: event))
        }
    }

    public func newEvent() throws -> NewEvent {
        switch self {
        case let .workout(event): return try event.newEvent()
        case let .alert(event): return try event.newEvent()
        }
    }
}

/// The workout's rules, for one user: the state is their workout and alert queue; data that
/// crosses a threshold records the alert once per workout (in the order of the table) and posts
/// it unless its text is queued already; reaching the goal completes the workout and being
/// caught ends it, caught winning over completed.
///
/// Refusals are ``AppError``: ``AppError/Code/goalNotSet``, ``AppError/Code/invalidState``,
/// ``AppError/Code/invalidInput``.
public struct FitnessDecider: SnapshotDecider {
    public let user: String
    public let snapshotName = "fitness"
    public let snapshotVersion = 1

    public init(user: String = AppStreams.defaultKey) {
        self.user = user
    }

    public var streams: [String] { [AppStreams.fitness(user), AppStreams.alerts(user)] }

    public func stream(for event: FitnessRecord) -> String {
        switch event {
        case .workout: return AppStreams.fitness(user)
        case .alert: return AppStreams.alerts(user)
        }
    }

    public var initialState: FitnessState { FitnessState() }

    public func evolve(_ state: inout FitnessState, with event: FitnessRecord) {
        switch event {
        case let .workout(event): state.workout.apply(event)
        case let .alert(event): state.queue.apply(event)
        }
    }

    public func decide(_ command: FitnessCommand, state: FitnessState) throws -> [FitnessRecord] {
        try Validate.key(user, "user")
        let workout = state.workout
        switch command {
        case let .setGoal(goal):
            guard goal > 0, goal <= AppLimits.maximumGoal else {
                throw AppError(.invalidInput, "The goal must be a positive number of steps, at most \(AppLimits.maximumGoal).")
            }
            guard workout.status == .notStarted else {
                throw AppError(.invalidState, "The goal can be set only before the workout starts; restart it first (it is \(workout.status.rawValue)).")
            }
            return [.workout(.goalSet(GoalSet(goal: goal)))]
        case .start:
            switch workout.status {
            case .notStarted where workout.goal == nil:
                throw AppError(.goalNotSet, "Set a goal to start.")
            case .notStarted, .paused:
                return [.workout(.started(WorkoutStarted()))]
            default:
                throw Self.invalidTransition("start", workout.status)
            }
        case .pause:
            guard workout.status == .inProgress else { throw Self.invalidTransition("pause", workout.status) }
            return [.workout(.paused(WorkoutPaused()))]
        case .restart:
            return [.workout(.restarted(WorkoutRestarted()))]
        case let .walk(steps, distance):
            guard steps >= 0, distance >= 0, distance.isFinite else {
                throw AppError(.invalidInput, "Steps and distance are increments: give numbers of 0 or more.")
            }
            guard steps <= AppLimits.maximumStepsPerReport, distance <= AppLimits.maximumDistancePerReport else {
                throw AppError(
                    .invalidInput,
                    "One report adds at most \(AppLimits.maximumStepsPerReport) steps and \(Int(AppLimits.maximumDistancePerReport)) meters; split it into several.")
            }
            guard steps > 0 || distance > 0 else {
                throw AppError(.invalidInput, "The pedometer data is empty; give some steps or distance.")
            }
            guard workout.status == .inProgress else { throw Self.invalidTransition("record pedometer data for", workout.status) }
            return Self.consequences(of: .pedometer(PedometerUpdated(steps: steps, distance: distance)), state)
        case let .moveNessie(distance):
            guard distance >= 0, distance.isFinite, distance <= AppLimits.maximumNessieDistance else {
                throw AppError(.invalidInput, "Nessie's distance must be a number of meters, 0 or more (at most \(Int(AppLimits.maximumNessieDistance))).")
            }
            guard workout.status == .inProgress else { throw Self.invalidTransition("move Nessie in", workout.status) }
            return Self.consequences(of: .nessieMoved(NessieMoved(distance: distance)), state)
        }
    }

    /// The data event, then each alert now due and not yet sent, then completed or caught (in
    /// the workout's stream), then the alerts posted (in the queue's).
    private static func consequences(of data: FitnessEvent, _ state: FitnessState) -> [FitnessRecord] {
        var workout = state.workout
        var queue = state.queue
        var records: [FitnessRecord] = [.workout(data)]
        var posts: [FitnessRecord] = []
        workout.apply(data)
        for alert in workout.alertsDue where !workout.sentAlerts.contains(alert) {
            let triggered = FitnessEvent.alertTriggered(AlertTriggered(alert: alert))
            records.append(.workout(triggered))
            workout.apply(triggered)
            if !queue.contains(text: alert.text) {
                let posted = AlertEvent.posted(AlertPosted(alert: alert.alert))
                posts.append(.alert(posted))
                queue.apply(posted)
            }
        }
        if workout.isCaught {
            records.append(.workout(.caught(WorkoutCaught())))
        } else if workout.isComplete {
            records.append(.workout(.completed(WorkoutCompleted())))
        }
        return records + posts
    }

    private static func invalidTransition(_ action: String, _ status: WorkoutStatus) -> AppError {
        AppError(.invalidState, "Cannot \(action) a workout that is \(status.rawValue); its button says \(status.label).")
    }
}
