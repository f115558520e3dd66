import EventStoreCore
import Projections

/// Where a workout stands, with the label the app's button shows for it.
public enum WorkoutStatus: String, Sendable, Codable, CaseIterable {
    case notStarted
    case inProgress
    case paused
    case completed
    case caught

    /// The button label.
    public var label: String {
        switch self {
        case .notStarted: return "Start"
        case .inProgress: return "Pause"
        case .paused: return "Resume"
        case .completed: return "Start Over"
        case .caught: return "Try Again"
        }
    }
}

/// A user's workout: the fold of their fitness stream. Pure: `apply` takes an event and
/// changes nothing else. Sums of recorded steps saturate, and thresholds are compared without
/// overflow, so no history (hand-appended events included) can make it trap.
public struct Workout: Sendable, Equatable, Codable, RowValue {
    public var status: WorkoutStatus = .notStarted
    public var goal: Int?
    public var steps = 0
    /// Meters walked.
    public var distance: Double = 0
    /// Nessie's distance, in meters.
    public var nessie: Double = 0
    /// The alerts this workout has sent, in the order sent.
    public var sentAlerts: [AlertName] = []

    public init() {}

    /// Whether Nessie has caught the user: the user has walked, and she is at least as far.
    public var isCaught: Bool { distance > 0 && nessie >= distance }

    /// Whether the goal is reached without being caught.
    public var isComplete: Bool {
        guard let goal else { return false }
        return steps >= goal && !isCaught
    }

    /// The alerts whose conditions hold now, in the order of the table (sent or not).
    public var alertsDue: [AlertName] {
        var due: [AlertName] = []
        if let goal, goal > 0 {
            if Self.reached(percent: 25, of: goal, steps) { due.append(.milestone25Percent) }
            if Self.reached(percent: 50, of: goal, steps) { due.append(.milestone50Percent) }
            if Self.reached(percent: 75, of: goal, steps) { due.append(.milestone75Percent) }
            if steps >= goal { due.append(.goalComplete) }
        }
        if distance > 0 {
            if nessie * 2 >= distance { due.append(.nessie50Percent) }
            if nessie * 10 >= distance * 9 { due.append(.nessie90Percent) }
        }
        if isCaught { due.append(.caughtByNessie) }
        return due
    }

    /// `steps * 100 >= goal * percent`, in 128-bit arithmetic (no overflow for any steps and goal).
    static func reached(percent: Int, of goal: Int, _ steps: Int) -> Bool {
        let left = steps.multipliedFullWidth(by: 100)
        let right = goal.multipliedFullWidth(by: percent)
        return left.high != right.high ? left.high > right.high : left.low >= right.low
    }

    /// Folds one event in.
    public mutating func apply(_ event: FitnessEvent) {
        switch event {
        case let .goalSet(event): goal = event.goal
        case .started: status = .inProgress
        case .paused: status = .paused
        case .restarted: self = Workout()
        case let .pedometer(event):
            let (sum, overflow) = steps.addingReportingOverflow(event.steps)
            steps = overflow ? (event.steps > 0 ? .max : .min) : sum
            distance += event.distance
        case let .nessieMoved(event): nessie = event.distance
        case .completed: status = .completed
        case .caught: status = .caught
        case let .alertTriggered(event):
            if !sentAlerts.contains(event.alert) { sentAlerts.append(event.alert) }
        }
    }

    /// `{"user","state","label","goal","steps","distance","nessie","alertsSent"}`.
    public func json(user: String) -> JSONValue {
        [
            "user": .string(user), "state": .string(status.rawValue), "label": .string(status.label),
            "goal": goal.map { .int($0) } ?? .null, "steps": .int(steps), "distance": .double(distance),
            "nessie": .double(nessie), "alertsSent": .array(sentAlerts.map { .string($0.rawValue) }),
        ]
    }
}
