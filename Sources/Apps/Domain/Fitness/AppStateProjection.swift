import EventStoreCore
import Projections

/// Each user's workout as the app shows it: state, button label, goal, steps, distance and
/// Nessie's distance. Query parameter: `user` (default "default").
public struct AppStateProjection: Projection {
    public let name = "app-state"
    public let version = 3
    public let tables = ["workouts"]
    /// Its apps' events, and deletions: a deleted stream's row goes with it.
    public let eventTypes: Set<String>? = FitnessEvent.types.union([StreamDeletion.eventType])
    /// Anyone may append to a workout's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("user", "the user (default: default)")]

    public init() {}

    public func apply(_ event: RecordedEvent, to state: inout ProjectionState) throws {
        if event.type == StreamDeletion.eventType {
            if let key = AppStreams.deletedRowKey(event, prefix: AppStreams.fitnessPrefix) { try state.delete("workouts", key) }
            return
        }
        guard let key = AppStreams.rowKey(of: event.stream, prefix: AppStreams.fitnessPrefix) else { return }
        let decoded = try FitnessEvent(recorded: event)
        var workout = try state.get("workouts", key, as: Workout.self) ?? Workout()
        workout.apply(decoded)
        try state.put("workouts", key, workout)
    }

    /// `{"user","state","label","goal","steps","distance","nessie","alertsSent"}`; a user with no
    /// workout yet is notStarted.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let user = parameters.value("user", default: AppStreams.defaultKey)
        return (try await state.get("workouts", RowKey(user), as: Workout.self) ?? Workout()).json(user: user)
    }
}
