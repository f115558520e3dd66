import Commands
import Projections
import Testing

/// Given these past events, when this command, then these new events (or this error).
@Suite("Fitness rules")
struct FitnessDeciderTests {
    /// The workout and queue after `history` and `queued`.
    func given(_ history: [FitnessEvent], queued: [AlertEvent] = []) -> (Workout, AlertQueue) {
        var workout = Workout()
        history.forEach { workout.apply($0) }
        var queue = AlertQueue()
        queued.forEach { queue.apply($0) }
        return (workout, queue)
    }

    func when(_ command: FitnessCommand, _ state: (Workout, AlertQueue)) throws(CommandError) -> FitnessDecision {
        try FitnessDecider.decide(command, workout: state.0, queue: state.1)
    }

    func refused(_ command: FitnessCommand, _ state: (Workout, AlertQueue)) -> CommandError? {
        do {
            _ = try FitnessDecider.decide(command, workout: state.0, queue: state.1)
            return nil
        } catch {
            return error
        }
    }

    let goal = FitnessEvent.goalSet(GoalSet(goal: 400))
    let started = FitnessEvent.started(WorkoutStarted())
    func walked(_ steps: Int, _ distance: Double = 0) -> FitnessEvent { .pedometer(PedometerUpdated(steps: steps, distance: distance)) }
    func triggered(_ alert: AlertName) -> FitnessEvent { .alertTriggered(AlertTriggered(alert: alert)) }
    func posted(_ alert: AlertName) -> AlertEvent { .posted(AlertPosted(alert: alert.alert)) }

    @Test("each state shows its button label")
    func labels() {
        #expect(WorkoutStatus.allCases.map(\.label) == ["Start", "Pause", "Resume", "Start Over", "Try Again"])
    }

    @Test("a positive goal is set before starting; zero, negative, or after starting is refused")
    func settingAGoal() throws {
        #expect(try when(.setGoal(400), given([])) == FitnessDecision(workout: [goal]))
        #expect(refused(.setGoal(0), given([]))?.code == .invalidInput)
        #expect(refused(.setGoal(-5), given([]))?.code == .invalidInput)
        #expect(refused(.setGoal(500), given([goal, started]))?.code == .invalidState)
    }

    @Test("start without a goal fails with goalNotSet: Set a goal to start")
    func startWithoutGoal() {
        let error = refused(.start, given([]))
        #expect(error == CommandError(.goalNotSet, "Set a goal to start."))
    }

    @Test("start from notStarted or paused gives inProgress; from any other state it is invalid")
    func starting() throws {
        #expect(try when(.start, given([goal])) == FitnessDecision(workout: [started]))
        #expect(try when(.start, given([goal, started, .paused(WorkoutPaused())])) == FitnessDecision(workout: [started]))
        for history in [[goal, started], [goal, started, walked(400), .completed(WorkoutCompleted())], [goal, started, .caught(WorkoutCaught())]] {
            #expect(refused(.start, given(history))?.code == .invalidState)
        }
    }

    @Test("pause from inProgress gives paused; from any other state it is invalid")
    func pausing() throws {
        #expect(try when(.pause, given([goal, started])) == FitnessDecision(workout: [.paused(WorkoutPaused())]))
        for history in [[], [goal], [goal, started, .paused(WorkoutPaused())], [goal, started, .completed(WorkoutCompleted())], [goal, started, .caught(WorkoutCaught())]] {
            #expect(refused(.pause, given(history))?.code == .invalidState)
        }
    }

    @Test("restart from any state clears goal, steps, distances and the alerts sent")
    func restarting() throws {
        let histories: [[FitnessEvent]] = [
            [], [goal], [goal, started, walked(100, 20), triggered(.milestone25Percent)],
            [goal, started, .paused(WorkoutPaused())], [goal, started, .completed(WorkoutCompleted())], [goal, started, .caught(WorkoutCaught())],
        ]
        for history in histories {
            let decision = try when(.restart, given(history))
            #expect(decision == FitnessDecision(workout: [.restarted(WorkoutRestarted())]))
            var workout = given(history).0
            decision.workout.forEach { workout.apply($0) }
            #expect(workout == Workout())
        }
    }

    @Test("pedometer data only while inProgress, and only as non-negative increments")
    func pedometerData() {
        for history in [[], [goal], [goal, started, .paused(WorkoutPaused())], [goal, started, .completed(WorkoutCompleted())]] {
            #expect(refused(.walk(steps: 10, distance: 1), given(history))?.code == .invalidState)
        }
        #expect(refused(.walk(steps: -1, distance: 0), given([goal, started]))?.code == .invalidInput)
        #expect(refused(.walk(steps: 1, distance: -.infinity), given([goal, started]))?.code == .invalidInput)
        #expect(refused(.walk(steps: 0, distance: 0), given([goal, started]))?.code == .invalidInput)
        #expect(refused(.moveNessie(-1), given([goal, started]))?.code == .invalidInput)
        #expect(refused(.moveNessie(5), given([goal]))?.code == .invalidState)
        // The refusals read as sentences, with the state and its button.
        #expect(refused(.walk(steps: 10, distance: 1), given([goal, started, .completed(WorkoutCompleted())]))?.message
            == "Cannot record pedometer data for a workout that is completed; its button says \(WorkoutStatus.completed.label).")
        #expect(refused(.moveNessie(5), given([goal]))?.message
            == "Cannot move Nessie in a workout that is notStarted; its button says \(WorkoutStatus.notStarted.label).")
    }

    @Test("goal 400 and 100 steps posts milestone 25")
    func firstMilestone() throws {
        #expect(try when(.walk(steps: 100, distance: 80), given([goal, started])) == FitnessDecision(
            workout: [walked(100, 80), triggered(.milestone25Percent)], alerts: [posted(.milestone25Percent)]))
        #expect(try when(.walk(steps: 99, distance: 80), given([goal, started])) == FitnessDecision(workout: [walked(99, 80)]))
    }

    @Test("one jump to the goal posts 25, 50, 75 and goal-complete in that order, and completes")
    func jumpToGoal() throws {
        let alerts: [AlertName] = [.milestone25Percent, .milestone50Percent, .milestone75Percent, .goalComplete]
        #expect(try when(.walk(steps: 400, distance: 300), given([goal, started])) == FitnessDecision(
            workout: [walked(400, 300)] + alerts.map(triggered) + [.completed(WorkoutCompleted())], alerts: alerts.map(posted)))
    }

    @Test("each alert is sent once per workout, even after it was cleared, until restart")
    func oncePerWorkout() throws {
        let history = [goal, started, walked(100), triggered(.milestone25Percent)]
        let cleared = [posted(.milestone25Percent), .cleared(AlertCleared(text: AlertName.milestone25Percent.text))]
        #expect(try when(.walk(steps: 10, distance: 0), given(history, queued: cleared)) == FitnessDecision(workout: [walked(10)]))
        // After a restart the same threshold sends it again.
        let again = history + [.restarted(WorkoutRestarted()), goal, started]
        #expect(try when(.walk(steps: 100, distance: 0), given(again, queued: cleared)) == FitnessDecision(
            workout: [walked(100), triggered(.milestone25Percent)], alerts: [posted(.milestone25Percent)]))
    }

    @Test("an alert still in the queue is triggered for the workout but not posted twice")
    func stillQueued() throws {
        let again = [goal, started, walked(100), triggered(.milestone25Percent), .restarted(WorkoutRestarted()), goal, started]
        #expect(try when(.walk(steps: 100, distance: 0), given(again, queued: [posted(.milestone25Percent)])) == FitnessDecision(
            workout: [walked(100), triggered(.milestone25Percent)], alerts: []))
    }

    @Test("Nessie alerts need a user distance above 0, then fire at 50% and 90% of it")
    func nessieAlerts() throws {
        let running = [goal, started]
        #expect(try when(.moveNessie(5), given(running)) == FitnessDecision(workout: [.nessieMoved(NessieMoved(distance: 5))]))
        let walkedTen = running + [walked(1, 10)]
        #expect(try when(.moveNessie(4.9), given(walkedTen)) == FitnessDecision(workout: [.nessieMoved(NessieMoved(distance: 4.9))]))
        #expect(try when(.moveNessie(5), given(walkedTen)) == FitnessDecision(
            workout: [.nessieMoved(NessieMoved(distance: 5)), triggered(.nessie50Percent)], alerts: [posted(.nessie50Percent)]))
        let halfway = walkedTen + [.nessieMoved(NessieMoved(distance: 5)), triggered(.nessie50Percent)]
        #expect(try when(.moveNessie(9), given(halfway)) == FitnessDecision(
            workout: [.nessieMoved(NessieMoved(distance: 9)), triggered(.nessie90Percent)], alerts: [posted(.nessie90Percent)]))
        // Walking on can drop Nessie below 50% without sending anything new.
        #expect(try when(.walk(steps: 1, distance: 100), given(halfway)) == FitnessDecision(workout: [walked(1, 100)]))
    }

    @Test("caught: Nessie at least as far as the user; the workout ends caught")
    func caught() throws {
        let history = [goal, started, walked(1, 10), .nessieMoved(NessieMoved(distance: 9)), triggered(.nessie50Percent), triggered(.nessie90Percent)]
        #expect(try when(.moveNessie(10), given(history)) == FitnessDecision(
            workout: [.nessieMoved(NessieMoved(distance: 10)), triggered(.caughtByNessie), .caught(WorkoutCaught())],
            alerts: [posted(.caughtByNessie)]))
    }

    @Test("caught wins over completed when one report does both")
    func caughtWinsOverCompleted() throws {
        let history = [goal, started, .nessieMoved(NessieMoved(distance: 100))]
        let all: [AlertName] = [.milestone25Percent, .milestone50Percent, .milestone75Percent, .goalComplete, .nessie50Percent, .nessie90Percent, .caughtByNessie]
        #expect(try when(.walk(steps: 400, distance: 50), given(history)) == FitnessDecision(
            workout: [walked(400, 50)] + all.map(triggered) + [.caught(WorkoutCaught())], alerts: all.map(posted)))
    }
}
