import EventStoreCore
import Projections

/// Each user's workout as the app shows it: state, button label, goal, steps, distance and
/// Nessie's distance. Query parameter: `user` (default "default").
///
/// A ``TypedProjection``: its events are most of a fitness app's log, so a rebuild decodes them
/// by hand from the stored bytes (``FitnessEvent/init(view:)``).
public struct AppStateProjection: TypedProjection {
    public let name = "app-state"
    public let version = 3
    public let tables = ["workouts"]
    /// Its apps' events, and deletions: a deleted stream's row goes with it.
    public let eventTypes: Set<String>? = FitnessEvent.types.union([StreamDeletion.eventType])
    /// Anyone may append to a workout's stream: an event that does not decode is passed over.
    public let errorPolicy = ProjectionErrorPolicy.skip
    public let queryParameters = [QueryParameter("user", "the user (default: default)")]

    public init() {}

    /// What an event does to the workouts.
    public enum Change {
        /// A user's workout stream was deleted: its row goes.
        case deleted(RowKey)
        /// An event of the user's workout.
        case workout(RowKey, FitnessEvent)
    }

    public func decode(_ event: EventView) throws -> Change? {
        if event.typeUTF8.elementsEqual(StreamDeletion.eventType.utf8) {
            return AppStreams.deletedRowKey(event.recordedEvent(), prefix: AppStreams.fitnessPrefix).map(Change.deleted)
        }
        guard let key = AppStreams.rowKey(ofStream: event.streamUTF8, prefix: AppStreams.fitnessPrefix) else { return nil }
        return .workout(key, try FitnessEvent(view: event))
    }

    public func apply(_ change: Change, to state: inout ProjectionState) throws {
        switch change {
        case let .deleted(key):
            try state.delete("workouts", key)
        case let .workout(key, event):
            var workout = try state.get("workouts", key, as: Workout.self) ?? Workout()
            workout.apply(event)
            try state.put("workouts", key, workout)
        }
    }

    /// `{"user","state","label","goal","steps","distance","nessie","alertsSent"}`; a user with no
    /// workout yet is notStarted.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let user = parameters.value("user", default: AppStreams.defaultKey)
        return (try await state.get("workouts", RowKey(user), as: Workout.self) ?? Workout()).json(user: user)
    }
}
