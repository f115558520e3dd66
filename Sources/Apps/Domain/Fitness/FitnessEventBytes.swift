import EventStoreCore

/// The workout events decoded by hand for the shapes the apps write (`{}`, `{"goal":N}`,
/// `{"steps":N,"distance":D}`, `{"distance":D}`, `{"alert":"NAME"}`, members in any order,
/// others ignored); anything else through ``init(recorded:)`` (`FitnessEventBytesTests` holds
/// the two paths together).
extension FitnessEvent: HandDecodedEvent {
    /// The event when the hand-written path takes its data; nil to leave it to `Decodable`.
    public static func decodedByHand(_ view: EventView) -> FitnessEvent? {
        let type = view.typeUTF8
        let data = view.data
        if type.elementsEqual(PedometerUpdated.eventType.utf8) {
            var fields = FieldValues(["steps", "distance"])
            guard fields.read(data), let steps = fields.integer(0), let distance = fields.double(1) else { return nil }
            return .pedometer(PedometerUpdated(steps: steps, distance: distance))
        }
        if type.elementsEqual(NessieMoved.eventType.utf8) {
            var fields = FieldValues(["distance"])
            guard fields.read(data), let distance = fields.double(0) else { return nil }
            return .nessieMoved(NessieMoved(distance: distance))
        }
        if type.elementsEqual(GoalSet.eventType.utf8) {
            var fields = FieldValues(["goal"])
            guard fields.read(data), let goal = fields.integer(0) else { return nil }
            return .goalSet(GoalSet(goal: goal))
        }
        if type.elementsEqual(AlertTriggered.eventType.utf8) {
            var fields = FieldValues(["alert"])
            guard fields.read(data), let name = fields.string(0), let alert = AlertName(rawValue: name) else { return nil }
            return .alertTriggered(AlertTriggered(alert: alert))
        }
        // The events without fields, stored as `{}` (other data goes the Decodable way).
        guard data.elementsEqual("{}".utf8) else { return nil }
        if type.elementsEqual(WorkoutStarted.eventType.utf8) { return .started(WorkoutStarted()) }
        if type.elementsEqual(WorkoutPaused.eventType.utf8) { return .paused(WorkoutPaused()) }
        if type.elementsEqual(WorkoutRestarted.eventType.utf8) { return .restarted(WorkoutRestarted()) }
        if type.elementsEqual(WorkoutCompleted.eventType.utf8) { return .completed(WorkoutCompleted()) }
        if type.elementsEqual(WorkoutCaught.eventType.utf8) { return .caught(WorkoutCaught()) }
        return nil
    }
}
