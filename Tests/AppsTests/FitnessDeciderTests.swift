import Apps
import Commands
import Testing
import TestSupport

/// Given these past events, when this command, then these new events (or this refusal).
@Suite("Fitness rules")
struct FitnessDeciderTests {
    let fitness = DeciderScenario(FitnessDecider(user: "ann"))

    let goal = FitnessRecord.workout(.goalSet(GoalSet(goal: 400)))
    let started = FitnessRecord.workout(.started(WorkoutStarted()))
    let paused = FitnessRecord.workout(.paused(WorkoutPaused()))
    let completed = FitnessRecord.workout(.completed(WorkoutCompleted()))
    let caught = FitnessRecord.workout(.caught(WorkoutCaught()))
    let restarted = FitnessRecord.workout(.restarted(WorkoutRestarted()))
    func walked(_ steps: Int, _ distance: Double = 0) -> FitnessRecord { .workout(.pedometer(PedometerUpdated(steps: steps, distance: distance))) }
    func nessie(_ distance: Double) -> FitnessRecord { .workout(.nessieMoved(NessieMoved(distance: distance))) }
    func triggered(_ alert: AlertName) -> FitnessRecord { .workout(.alertTriggered(AlertTriggered(alert: alert))) }
    func posted(_ alert: AlertName) -> FitnessRecord { .alert(.posted(AlertPosted(alert: alert.alert))) }
    func cleared(_ alert: AlertName) -> FitnessRecord { .alert(.cleared(AlertCleared(text: alert.text))) }

    @Test("each state shows its button label")
    func labels() {
        #expect(WorkoutStatus.allCases.map(\.label) == ["Start", "Pause", "Resume", "Start Over", "Try Again"])
    }

    @Test("a positive goal is set before starting; zero, negative, too large, or after starting is refused")
    func settingAGoal() {
        fitness.when(.setGoal(400)).then(goal)
        fitness.when(.setGoal(0)).thenRefused(.invalidInput)
        fitness.when(.setGoal(-5)).thenRefused(.invalidInput)
        fitness.when(.setGoal(AppLimits.maximumGoal)).then(.workout(.goalSet(GoalSet(goal: AppLimits.maximumGoal))))
        fitness.when(.setGoal(AppLimits.maximumGoal + 1)).thenRefused(.invalidInput)
        fitness.when(.setGoal(.max)).thenRefused(.invalidInput, "The goal must be a positive number of steps, at most 10000000.")
        fitness.given(goal, started).when(.setGoal(500)).thenRefused(.invalidState)
    }

    @Test("start without a goal fails with goalNotSet: Set a goal to start")
    func startWithoutGoal() {
        fitness.when(.start).thenThrows(AppError(.goalNotSet, "Set a goal to start."))
    }

    @Test("start from notStarted or paused gives inProgress; from any other state it is invalid")
    func starting() {
        fitness.given(goal).when(.start).then(started)
        fitness.given(goal, started, paused).when(.start).then(started)
        for history in [[goal, started], [goal, started, walked(400), completed], [goal, started, caught]] {
            fitness.given(history).when(.start).thenRefused(.invalidState)
        }
    }

    @Test("pause from inProgress gives paused; from any other state it is invalid")
    func pausing() {
        fitness.given(goal, started).when(.pause).then(paused)
        for history in [[], [goal], [goal, started, paused], [goal, started, completed], [goal, started, caught]] {
            fitness.given(history).when(.pause).thenRefused(.invalidState)
        }
    }

    @Test("restart from any state clears goal, steps, distances and the alerts sent")
    func restarting() {
        let histories: [[FitnessRecord]] = [
            [], [goal], [goal, started, walked(100, 20), triggered(.milestone25Percent)],
            [goal, started, paused], [goal, started, completed], [goal, started, caught],
        ]
        for history in histories {
            let outcome = fitness.given(history).when(.restart)
            outcome.then(restarted)
            #expect(outcome.stateAfter.workout == Workout())
        }
    }

    @Test("pedometer data only while inProgress, and only as non-negative increments within the limits")
    func pedometerData() {
        for history in [[], [goal], [goal, started, paused], [goal, started, completed]] {
            fitness.given(history).when(.walk(steps: 10, distance: 1)).thenRefused(.invalidState)
        }
        let running = fitness.given(goal, started)
        running.when(.walk(steps: -1, distance: 0)).thenRefused(.invalidInput)
        running.when(.walk(steps: 1, distance: -.infinity)).thenRefused(.invalidInput)
        running.when(.walk(steps: 1, distance: .nan)).thenRefused(.invalidInput)
        running.when(.walk(steps: 0, distance: 0)).thenRefused(.invalidInput)
        running.when(.walk(steps: .max, distance: 0)).thenRefused(.invalidInput)
        running.when(.walk(steps: 1, distance: 2e9)).thenRefused(.invalidInput)
        running.when(.moveNessie(-1)).thenRefused(.invalidInput)
        running.when(.moveNessie(.infinity)).thenRefused(.invalidInput)
        running.when(.moveNessie(2e12)).thenRefused(.invalidInput)
        fitness.given(goal).when(.moveNessie(5)).thenRefused(.invalidState)
        // The refusals read as sentences, with the state and its button.
        fitness.given(goal, started, completed).when(.walk(steps: 10, distance: 1)).thenRefused(
            .invalidState, "Cannot record pedometer data for a workout that is completed; its button says \(WorkoutStatus.completed.label).")
        fitness.given(goal).when(.moveNessie(5)).thenRefused(
            .invalidState, "Cannot move Nessie in a workout that is notStarted; its button says \(WorkoutStatus.notStarted.label).")
    }

    @Test("a user key that is empty or too long is refused before anything is decided")
    func userKeys() {
        DeciderScenario(FitnessDecider(user: "")).when(.setGoal(400)).thenRefused(.invalidInput)
        DeciderScenario(FitnessDecider(user: String(repeating: "u", count: 151))).when(.setGoal(400)).thenRefused(.invalidInput)
    }

    @Test("goal 400 and 100 steps posts milestone 25")
    func firstMilestone() {
        fitness.given(goal, started).when(.walk(steps: 100, distance: 80))
            .then(walked(100, 80), triggered(.milestone25Percent), posted(.milestone25Percent))
        fitness.given(goal, started).when(.walk(steps: 99, distance: 80)).then(walked(99, 80))
    }

    @Test("one jump to the goal posts 25, 50, 75 and goal-complete in that order, and completes")
    func jumpToGoal() {
        let alerts: [AlertName] = [.milestone25Percent, .milestone50Percent, .milestone75Percent, .goalComplete]
        fitness.given(goal, started).when(.walk(steps: 400, distance: 300))
            .then([walked(400, 300)] + alerts.map(triggered) + [completed] + alerts.map(posted))
    }

    @Test("each alert is sent once per workout, even after it was cleared, until restart")
    func oncePerWorkout() {
        let history = [goal, started, walked(100), triggered(.milestone25Percent), posted(.milestone25Percent), cleared(.milestone25Percent)]
        fitness.given(history).when(.walk(steps: 10, distance: 0)).then(walked(10))
        // After a restart the same threshold sends it again.
        fitness.given(history + [restarted, goal, started]).when(.walk(steps: 100, distance: 0))
            .then(walked(100), triggered(.milestone25Percent), posted(.milestone25Percent))
    }

    @Test("an alert still in the queue is triggered for the workout but not posted twice")
    func stillQueued() {
        let again = [goal, started, walked(100), triggered(.milestone25Percent), posted(.milestone25Percent), restarted, goal, started]
        fitness.given(again).when(.walk(steps: 100, distance: 0)).then(walked(100), triggered(.milestone25Percent))
    }

    @Test("Nessie alerts need a user distance above 0, then fire at 50% and 90% of it")
    func nessieAlerts() {
        let running = [goal, started]
        fitness.given(running).when(.moveNessie(5)).then(nessie(5))
        let walkedTen = running + [walked(1, 10)]
        fitness.given(walkedTen).when(.moveNessie(4.9)).then(nessie(4.9))
        fitness.given(walkedTen).when(.moveNessie(5)).then(nessie(5), triggered(.nessie50Percent), posted(.nessie50Percent))
        let halfway = walkedTen + [nessie(5), triggered(.nessie50Percent)]
        fitness.given(halfway).when(.moveNessie(9)).then(nessie(9), triggered(.nessie90Percent), posted(.nessie90Percent))
        // Walking on can drop Nessie below 50% without sending anything new.
        fitness.given(halfway).when(.walk(steps: 1, distance: 100)).then(walked(1, 100))
    }

    @Test("caught: Nessie at least as far as the user; the workout ends caught")
    func caughtByNessie() {
        let history = [goal, started, walked(1, 10), nessie(9), triggered(.nessie50Percent), triggered(.nessie90Percent)]
        fitness.given(history).when(.moveNessie(10)).then(nessie(10), triggered(.caughtByNessie), caught, posted(.caughtByNessie))
    }

    @Test("caught wins over completed when one report does both")
    func caughtWinsOverCompleted() {
        let all: [AlertName] = [.milestone25Percent, .milestone50Percent, .milestone75Percent, .goalComplete, .nessie50Percent, .nessie90Percent, .caughtByNessie]
        fitness.given(goal, started, nessie(100)).when(.walk(steps: 400, distance: 50))
            .then([walked(400, 50)] + all.map(triggered) + [caught] + all.map(posted))
    }

    @Test("steps saturate instead of overflowing when reports add past Int.max, and the thresholds still hold")
    func stepsSaturate() {
        var history = [goal, started]
        for _ in 0..<3 { history.append(walked(AppLimits.maximumStepsPerReport)) }
        let state = fitness.given(history).state
        #expect(state.workout.steps == 3 * AppLimits.maximumStepsPerReport)
        let huge = [FitnessRecord.workout(.pedometer(PedometerUpdated(steps: .max, distance: 0)))]
        let saturated = fitness.given([goal, started] + huge + huge).state
        #expect(saturated.workout.steps == .max)
    }
}
