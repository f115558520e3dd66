import EventStore
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
/// changes nothing else.
public struct Workout: Sendable, Equatable, RowValue {
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
            // steps >= p% of goal, in integers: steps * 100 >= goal * p.
            if steps * 100 >= goal * 25 { due.append(.milestone25Percent) }
            if steps * 100 >= goal * 50 { due.append(.milestone50Percent) }
            if steps * 100 >= goal * 75 { due.append(.milestone75Percent) }
            if steps >= goal { due.append(.goalComplete) }
        }
        if distance > 0 {
            if nessie * 2 >= distance { due.append(.nessie50Percent) }
            if nessie * 10 >= distance * 9 { due.append(.nessie90Percent) }
        }
        if isCaught { due.append(.caughtByNessie) }
        return due
    }

    /// Folds one event in.
    public mutating func apply(_ event: FitnessEvent) {
        switch event {
        case let .goalSet(event): goal = event.goal
        case .started: status = .inProgress
        case .paused: status = .paused
        case .restarted: self = Workout()
        case let .pedometer(event):
            steps += event.steps
            distance += event.distance
        case let .nessieMoved(event): nessie = event.distance
        case .completed: status = .completed
        case .caught: status = .caught
        case let .alertTriggered(event):
            if !sentAlerts.contains(event.alert) { sentAlerts.append(event.alert) }
        }
    }

    public func encode(to writer: inout RowWriter) {
        writer.write(status.rawValue)
        writer.write(goal)
        writer.write(steps)
        writer.write(distance)
        writer.write(nessie)
        writer.write(sentAlerts.map(\.rawValue))
    }

    public init(from reader: inout RowReader) throws(RowDecodingError) {
        guard let status = WorkoutStatus(rawValue: try reader.read(String.self)) else { throw RowDecodingError("unknown workout status") }
        self.status = status
        goal = try reader.read(Int?.self)
        steps = try reader.read(Int.self)
        distance = try reader.read(Double.self)
        nessie = try reader.read(Double.self)
        sentAlerts = try reader.read([String].self).map { raw throws(RowDecodingError) in
            guard let name = AlertName(rawValue: raw) else { throw RowDecodingError("unknown alert name \(raw)") }
            return name
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
