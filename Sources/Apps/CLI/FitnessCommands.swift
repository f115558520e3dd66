import ArgumentParser
import EsctlCommands
import Commands
import EventStore
import Projections
import Apps

struct Fitness: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The step counter chased by Nessie: set a goal, start, pause, restart, walk, move Nessie.",
        discussion: """
            Each command records its events and prints the workout after it, with any alert it \
            posted; --json prints the events recorded instead. Data that crosses a threshold posts \
            the alert (once per workout) and completes or ends the workout by itself. A refused \
            command (goal not set, invalid state) prints one sentence and exits 1.
            """,
        subcommands: [Goal.self, Start.self, Pause.self, Restart.self, Walk.self, Nessie.self])

    /// Runs a workout command and prints its outcome.
    static func run(_ command: FitnessCommand, _ options: DomainOptions, _ user: UserOption) async throws {
        try await reportingErrors {
            try await options.withBackend(of: FitnessApp()) { backend in
                let outcome = try await backend.fitness(command, user: user.user)
                options.warn(outcome.passedOver)
                if options.printJSON(outcome.recorded) { return }
                let workout = outcome.state.workout
                let goal = workout.goal.map(String.init) ?? "not set"
                Console.print(
                    "\(user.user): \(workout.status.rawValue) (button: \(workout.status.label)); goal \(goal), steps \(workout.steps), distance \(formatMeters(workout.distance)), Nessie \(formatMeters(workout.nessie))")
                for event in outcome.recorded where event.type == AlertPosted.eventType {
                    if let posted = try? AlertPosted(recorded: event) { Console.print("alert: \(posted.alert.text)") }
                }
            }
        }
    }

    struct Goal: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the goal, a positive number of steps (before starting).")
        @OptionGroup var options: DomainOptions
        @OptionGroup var user: UserOption
        @Argument(help: ArgumentHelp("The goal in steps.", valueName: "STEPS"), transform: Numbers.whole("The goal", Int.min...Int.max)) var steps: Int
        func run() async throws { try await Fitness.run(.setGoal(steps), options, user) }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start (or resume) the workout; it needs a goal.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var user: UserOption
        func run() async throws { try await Fitness.run(.start, options, user) }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Pause the workout.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var user: UserOption
        func run() async throws { try await Fitness.run(.pause, options, user) }
    }

    struct Restart: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start over: clears the goal, steps, distances and the alerts sent.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var user: UserOption
        func run() async throws { try await Fitness.run(.restart, options, user) }
    }

    struct Walk: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Record pedometer data: steps and meters walked since the last report.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var user: UserOption
        @Option(parsing: .unconditional, help: "Steps walked.", transform: Numbers.whole("--steps", Int.min...Int.max)) var steps: Int
        @Option(
            parsing: .unconditional, help: ArgumentHelp("Meters walked (default 0).", valueName: "METERS"),
            transform: Numbers.decimal("--distance", -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude))
        var distance: Double = 0
        func run() async throws { try await Fitness.run(.walk(steps: steps, distance: distance), options, user) }
    }

    struct Nessie: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move Nessie: her distance, in meters, is now this.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var user: UserOption
        @Argument(
            help: ArgumentHelp("Nessie's distance in meters.", valueName: "METERS"),
            transform: Numbers.decimal("Nessie's distance", -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude))
        var meters: Double
        func run() async throws { try await Fitness.run(.moveNessie(meters), options, user) }
    }
}

struct Alerts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The alert center: post a free-text alert, clear one, clear all.",
        discussion: "Posting a text already queued records nothing (exit 0). Clearing an alert that is not queued exits 67.",
        subcommands: [Post.self, Clear.self])

    struct Post: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Post a free-text alert.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var user: UserOption
        @Argument(help: "The alert's text.") var text: String
        @Option(help: "good or bad (default good).") var severity: SeverityOption = .good

        func run() async throws {
            try await reportingErrors {
                try await options.withBackend(of: FitnessApp()) { backend in
                    let outcome = try await backend.alerts(.post(text: text, severity: severity.severity), user: user.user)
                    options.warn(outcome.passedOver)
                    if options.printJSON(outcome.recorded) { return }
                    if outcome.recorded.isEmpty {
                        Console.print("already queued, nothing recorded: \(text)")
                    } else {
                        Console.print("posted (\(severity.rawValue)): \(text); \(outcome.state.count) alert(s) queued")
                    }
                }
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Clear one alert, by name (e.g. milestone25Percent) or text, or --all.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var user: UserOption
        @Argument(help: "The alert's name or text.") var alert: String?
        @Flag(help: "Clear every alert.") var all = false

        func validate() throws {
            guard (alert == nil) != !all else { throw ValidationError("Name one alert (its name or text), or give --all.") }
        }

        func run() async throws {
            try await reportingErrors {
                try await options.withBackend(of: FitnessApp()) { backend in
                    let before = try await backend.alertQueue(user: user.user).count
                    let command: AlertCommand = all ? .clearAll : .clear(alert ?? "")
                    let outcome = try await backend.alerts(command, user: user.user)
                    options.warn(outcome.passedOver)
                    if options.printJSON(outcome.recorded) { return }
                    if all {
                        Console.print(outcome.recorded.isEmpty ? "the queue was empty; nothing recorded" : "cleared \(before) alert(s)")
                    } else {
                        Console.print("cleared: \(alert ?? ""); \(outcome.state.count) alert(s) queued")
                    }
                }
            }
        }
    }
}

enum SeverityOption: String, ExpressibleByArgument, CaseIterable {
    case good, bad
    var severity: Severity { self == .good ? .good : .bad }
}
