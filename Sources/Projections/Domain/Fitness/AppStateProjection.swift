import EventStore

/// Each user's workout as the app shows it: state, button label, goal, steps, distance and
/// Nessie's distance. Query parameter: `user` (default "default").
public struct AppStateProjection: Projection {
    public let name = "app-state"
    public let version = 1
    public let tables = ["workouts"]
    public let eventTypes: Set<String>? = FitnessEvent.types
    public let queryParameters = ["user"]

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        guard let key = DomainStreams.rowKey(of: event.stream, prefix: DomainStreams.fitnessPrefix) else { return }
        var workout = try state.get("workouts", key, as: Workout.self) ?? Workout()
        workout.apply(try FitnessEvent(event))
        try state.put("workouts", key, workout)
    }

    /// `{"user","state","label","goal","steps","distance","nessie","alertsSent"}`; a user with no
    /// workout yet is notStarted.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) throws -> JSONValue {
        let user = parameters.value("user", default: DomainStreams.defaultKey)
        return (try state.value("workouts", RowKey(user), as: Workout.self) ?? Workout()).json(user: user)
    }
}
