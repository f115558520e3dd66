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
    public typealias Change = StreamRowChange<FitnessEvent>

    public func decode(_ event: EventView) throws -> Change? {
        try StreamRows.change(event, prefix: AppStreams.fitnessPrefix, as: FitnessEvent.self)
    }

    public func apply(_ change: Change, to state: inout ProjectionState) throws {
        try StreamRows.apply(change, table: "workouts", to: &state, empty: Workout()) { $0.apply($1) }
    }

    /// `{"user","state","label","goal","steps","distance","nessie","alertsSent"}`; a user with no
    /// workout yet is notStarted.
    public func query(_ state: some StateReader, _ parameters: QueryParameters) async throws -> JSONValue {
        let user = parameters.value("user", default: AppStreams.defaultKey)
        return (try await state.get("workouts", RowKey(user), as: Workout.self) ?? Workout()).json(user: user)
    }
}
