import EventStore

/// A goal of steps was set.
public struct GoalSet: DomainEvent {
    public static let type = "GoalSet"
    public var goal: Int
    public init(goal: Int) { self.goal = goal }
    public var json: JSONValue { ["goal": .int(goal)] }
    public init(fields: EventFields) throws(DomainDataError) { goal = try fields.int("goal") }
}

/// The workout started or resumed.
public struct WorkoutStarted: DomainEvent {
    public static let type = "WorkoutStarted"
    public init() {}
    public var json: JSONValue { [:] }
    public init(fields: EventFields) throws(DomainDataError) {}
}

/// The workout was paused.
public struct WorkoutPaused: DomainEvent {
    public static let type = "WorkoutPaused"
    public init() {}
    public var json: JSONValue { [:] }
    public init(fields: EventFields) throws(DomainDataError) {}
}

/// The workout was reset to its start: goal, steps, distances and sent alerts cleared.
public struct WorkoutRestarted: DomainEvent {
    public static let type = "WorkoutRestarted"
    public init() {}
    public var json: JSONValue { [:] }
    public init(fields: EventFields) throws(DomainDataError) {}
}

/// The pedometer reported steps and meters walked since its last report.
public struct PedometerUpdated: DomainEvent {
    public static let type = "PedometerUpdated"
    public var steps: Int
    public var distance: Double
    public init(steps: Int, distance: Double) {
        self.steps = steps
        self.distance = distance
    }
    public var json: JSONValue { ["steps": .int(steps), "distance": .double(distance)] }
    public init(fields: EventFields) throws(DomainDataError) {
        steps = try fields.int("steps")
        distance = try fields.double("distance")
    }
}

/// Nessie advanced: her distance, in meters, is now this.
public struct NessieMoved: DomainEvent {
    public static let type = "NessieMoved"
    public var distance: Double
    public init(distance: Double) { self.distance = distance }
    public var json: JSONValue { ["distance": .double(distance)] }
    public init(fields: EventFields) throws(DomainDataError) { distance = try fields.double("distance") }
}

/// The steps reached the goal without Nessie catching the user.
public struct WorkoutCompleted: DomainEvent {
    public static let type = "WorkoutCompleted"
    public init() {}
    public var json: JSONValue { [:] }
    public init(fields: EventFields) throws(DomainDataError) {}
}

/// Nessie caught the user.
public struct WorkoutCaught: DomainEvent {
    public static let type = "WorkoutCaught"
    public init() {}
    public var json: JSONValue { [:] }
    public init(fields: EventFields) throws(DomainDataError) {}
}

/// The workout sent one of its alerts (each at most once until a restart).
public struct AlertTriggered: DomainEvent {
    public static let type = "AlertTriggered"
    public var alert: AlertName
    public init(alert: AlertName) { self.alert = alert }
    public var json: JSONValue { ["alert": .string(alert.rawValue)] }
    public init(fields: EventFields) throws(DomainDataError) {
        let name = try fields.string("alert")
        guard let alert = AlertName(rawValue: name) else { throw DomainDataError("AlertTriggered names an unknown alert '\(name)'") }
        self.alert = alert
    }
}

/// Every event of a user's workout stream.
public enum FitnessEvent: Sendable, Equatable {
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
        GoalSet.type, WorkoutStarted.type, WorkoutPaused.type, WorkoutRestarted.type, PedometerUpdated.type,
        NessieMoved.type, WorkoutCompleted.type, WorkoutCaught.type, AlertTriggered.type,
    ]

    /// Decodes a recorded workout event; throws for another type or bad data.
    public init(_ recorded: RecordedEvent) throws(DomainDataError) {
        switch recorded.type {
        case GoalSet.type: self = .goalSet(try GoalSet(recorded))
        case WorkoutStarted.type: self = .started(try WorkoutStarted(recorded))
        case WorkoutPaused.type: self = .paused(try WorkoutPaused(recorded))
        case WorkoutRestarted.type: self = .restarted(try WorkoutRestarted(recorded))
        case PedometerUpdated.type: self = .pedometer(try PedometerUpdated(recorded))
        case NessieMoved.type: self = .nessieMoved(try NessieMoved(recorded))
        case WorkoutCompleted.type: self = .completed(try WorkoutCompleted(recorded))
        case WorkoutCaught.type: self = .caught(try WorkoutCaught(recorded))
        case AlertTriggered.type: self = .alertTriggered(try AlertTriggered(recorded))
        default: throw DomainDataError("\(recorded.type) is not a workout event")
        }
    }

    /// The event ready to append.
    public var newEvent: NewEvent {
        switch self {
        case let .goalSet(event): return event.newEvent
        case let .started(event): return event.newEvent
        case let .paused(event): return event.newEvent
        case let .restarted(event): return event.newEvent
        case let .pedometer(event): return event.newEvent
        case let .nessieMoved(event): return event.newEvent
        case let .completed(event): return event.newEvent
        case let .caught(event): return event.newEvent
        case let .alertTriggered(event): return event.newEvent
        }
    }
}
