import Projections

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

/// The events a workout command records: in the user's workout stream, and in their alert
/// queue's stream.
public struct FitnessDecision: Sendable, Equatable {
    public var workout: [FitnessEvent]
    public var alerts: [AlertEvent]

    public init(workout: [FitnessEvent], alerts: [AlertEvent] = []) {
        self.workout = workout
        self.alerts = alerts
    }
}

/// The workout's rules, as a pure function of the state and the command.
public enum FitnessDecider {
    /// Decides what `command` records, given the user's workout and alert queue; throws
    /// ``CommandError`` (``CommandError/Code/goalNotSet``, ``CommandError/Code/invalidState``,
    /// ``CommandError/Code/invalidInput``) when it is refused.
    ///
    /// Data that crosses a threshold records the alert once per workout (in the order of the
    /// table) and posts it unless its text is queued already; reaching the goal completes the
    /// workout and being caught ends it, caught winning over completed.
    public static func decide(_ command: FitnessCommand, workout: Workout, queue: AlertQueue) throws(CommandError) -> FitnessDecision {
        switch command {
        case let .setGoal(goal):
            guard goal > 0 else { throw CommandError(.invalidInput, "The goal must be a positive number of steps.") }
            guard workout.status == .notStarted else {
                throw CommandError(.invalidState, "The goal can be set only before the workout starts; restart it first (it is \(workout.status.rawValue)).")
            }
            return FitnessDecision(workout: [.goalSet(GoalSet(goal: goal))])
        case .start:
            switch workout.status {
            case .notStarted where workout.goal == nil:
                throw CommandError(.goalNotSet, "Set a goal to start.")
            case .notStarted, .paused:
                return FitnessDecision(workout: [.started(WorkoutStarted())])
            default:
                throw invalidTransition("start", workout.status)
            }
        case .pause:
            guard workout.status == .inProgress else { throw invalidTransition("pause", workout.status) }
            return FitnessDecision(workout: [.paused(WorkoutPaused())])
        case .restart:
            return FitnessDecision(workout: [.restarted(WorkoutRestarted())])
        case let .walk(steps, distance):
            guard steps >= 0, distance >= 0, distance.isFinite, steps <= 10_000_000, distance <= 1e9 else {
                throw CommandError(.invalidInput, "Steps and distance are increments: give numbers of 0 or more.")
            }
            guard steps > 0 || distance > 0 else {
                throw CommandError(.invalidInput, "The pedometer data is empty; give some steps or distance.")
            }
            guard workout.status == .inProgress else { throw invalidTransition("record pedometer data for", workout.status) }
            return consequences(of: .pedometer(PedometerUpdated(steps: steps, distance: distance)), workout, queue)
        case let .moveNessie(distance):
            guard distance >= 0, distance.isFinite, distance <= 1e12 else {
                throw CommandError(.invalidInput, "Nessie's distance must be a number of meters, 0 or more.")
            }
            guard workout.status == .inProgress else { throw invalidTransition("move Nessie in", workout.status) }
            return consequences(of: .nessieMoved(NessieMoved(distance: distance)), workout, queue)
        }
    }

    /// The data event, then each alert now due and not yet sent, then completed or caught.
    private static func consequences(of data: FitnessEvent, _ workout: Workout, _ queue: AlertQueue) -> FitnessDecision {
        var workout = workout
        var queue = queue
        var decision = FitnessDecision(workout: [data])
        workout.apply(data)
        for alert in workout.alertsDue where !workout.sentAlerts.contains(alert) {
            let triggered = FitnessEvent.alertTriggered(AlertTriggered(alert: alert))
            decision.workout.append(triggered)
            workout.apply(triggered)
            if !queue.contains(text: alert.text) {
                let posted = AlertEvent.posted(AlertPosted(alert: alert.alert))
                decision.alerts.append(posted)
                queue.apply(posted)
            }
        }
        if workout.isCaught {
            decision.workout.append(.caught(WorkoutCaught()))
        } else if workout.isComplete {
            decision.workout.append(.completed(WorkoutCompleted()))
        }
        return decision
    }

    private static func invalidTransition(_ action: String, _ status: WorkoutStatus) -> CommandError {
        CommandError(.invalidState, "Cannot \(action) a workout that is \(status.rawValue); its button says \(status.label).")
    }
}
