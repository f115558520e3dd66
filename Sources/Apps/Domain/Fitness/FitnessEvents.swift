import Commands
import EventStoreCore

/// A goal of steps was set.
public struct GoalSet: EventData, Equatable {
    public static let eventType = "GoalSet"
    public var goal: Int
    public init(goal: Int) { self.goal = goal }
}

/// The workout started or resumed.
public struct WorkoutStarted: EventData, Equatable {
    public static let eventType = "WorkoutStarted"
    public init() {}
}

/// The workout was paused.
public struct WorkoutPaused: EventData, Equatable {
    public static let eventType = "WorkoutPaused"
    public init() {}
}

/// The workout was reset to its start: goal, steps, distances and sent alerts cleared.
public struct WorkoutRestarted: EventData, Equatable {
    public static let eventType = "WorkoutRestarted"
    public init() {}
}

/// The pedometer reported steps and meters walked since its last report.
public struct PedometerUpdated: EventData, Equatable {
    public static let eventType = "PedometerUpdated"
    public var steps: Int
    public var distance: Double
    public init(steps: Int, distance: Double) {
        self.steps = steps
        self.distance = distance
    }
}

/// Nessie advanced: her distance, in meters, is now this.
public struct NessieMoved: EventData, Equatable {
    public static let eventType = "NessieMoved"
    public var distance: Double
    public init(distance: Double) { self.distance = distance }
}

/// The steps reached the goal without Nessie catching the user.
public struct WorkoutCompleted: EventData, Equatable {
    public static let eventType = "WorkoutCompleted"
    public init() {}
}

/// Nessie caught the user.
public struct WorkoutCaught: EventData, Equatable {
    public static let eventType = "WorkoutCaught"
    public init() {}
}

/// The workout sent one of its alerts (each at most once until a restart).
public struct AlertTriggered: EventData, Equatable {
    public static let eventType = "AlertTriggered"
    public var alert: AlertName
    public init(alert: AlertName) { self.alert = alert }
}

/// Every event of a user's workout stream.
public enum FitnessEvent: RecordableEvent, Equatable {
    case goalSet(GoalSet)
    case started(WorkoutStarted)
    case paused(WorkoutPaused)
    case restarted(WorkoutRestarted)
    case pedometer(PedometerUpdated)
    case nessieMoved(NessieMoved)
    case completed(WorkoutCompleted)
    case caught(WorkoutCaught)
    case alertTriggered(AlertTriggered)

    /// The type names of the workout's events.
    public static let types: Set<String> = [
        GoalSet.eventType, WorkoutStarted.eventType, WorkoutPaused.eventType, WorkoutRestarted.eventType,
        PedometerUpdated.eventType, NessieMoved.eventType, WorkoutCompleted.eventType, WorkoutCaught.eventType,
        AlertTriggered.eventType,
    ]

    public init(recorded event: RecordedEvent) throws(EventDecodingError) {
        switch event.type {
        case GoalSet.eventType: self = .goalSet(try GoalSet(recorded: event))
        case WorkoutStarted.eventType: self = .started(try WorkoutStarted(recorded: event))
        case WorkoutPaused.eventType: self = .paused(try WorkoutPaused(recorded: event))
        case WorkoutRestarted.eventType: self = .restarted(try WorkoutRestarted(recorded: event))
        case PedometerUpdated.eventType: self = .pedometer(try PedometerUpdated(recorded: event))
        case NessieMoved.eventType: self = .nessieMoved(try NessieMoved(recorded: event))
        case WorkoutCompleted.eventType: self = .completed(try WorkoutCompleted(recorded: event))
        case WorkoutCaught.eventType: self = .caught(try WorkoutCaught(recorded: event))
        case AlertTriggered.eventType: self = .alertTriggered(try AlertTriggered(recorded: event))
        default: throw EventDecodingError(event, reason: "\(event.type) is not a workout event")
        }
    }

    public func newEvent() throws -> NewEvent {
        switch self {
        case let .goalSet(event): return try event.newEvent()
        case let .started(event): return try event.newEvent()
        case let .paused(event): return try event.newEvent()
        case let .restarted(event): return try event.newEvent()
        case let .pedometer(event): return try event.newEvent()
        case let .nessieMoved(event): return try event.newEvent()
        case let .completed(event): return try event.newEvent()
        case let .caught(event): return try event.newEvent()
        case let .alertTriggered(event): return try event.newEvent()
        }
    }
}
