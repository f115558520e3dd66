import AppModules
import Commands
import EventStoreCore
import Projections

/// The step counter chased by a monster, with its alert center: workouts and alerts per user,
/// their read models, and their commands (`/apps/fitness/...` and `/apps/alerts/...`).
public struct FitnessApp: AppModule {
    public let name = "fitness"
    public let summary = "A step counter chased by a monster, with its alerts."
    public var projections: [any Projection] { [AppStateProjection(), AlertsProjection()] }
    public let snapshotDeciders: Set<String> = ["fitness", "alerts"]

    public var openAPI: String? { String(decoding: PackageResources.fitness_yaml, as: UTF8.self) }

    public init() {}

    public func checkSnapshot(_ snapshot: Snapshots.Entry, in store: any EventLog) async throws -> String? {
        guard let stream = snapshot.versions.first?.stream else { return AppSet.belongsToNoDecider(snapshot) }
        switch snapshot.decider {
        case "fitness":
            guard let user = AppStreams.key(of: stream, prefix: AppStreams.fitnessPrefix) else { break }
            return try await Snapshots.check(snapshot, with: FitnessDecider(user: user), in: store)
        case "alerts":
            guard let user = AppStreams.key(of: stream, prefix: AppStreams.alertsPrefix) else { break }
            return try await Snapshots.check(snapshot, with: AlertDecider(user: user), in: store)
        default:
            break
        }
        return AppSet.belongsToNoDecider(snapshot)
    }

    public func commands(_ context: AppContext) throws -> [AppCommand] {
        let backend = try AppBackend(context, reaching: schemaVersions)
        let user = AppField("user", .string, required: false, "The user (default \"default\").")
        func fitness(_ name: String, _ summary: String, _ fields: [AppField], _ command: @escaping @Sendable (AppInput) throws -> FitnessCommand) -> AppCommand {
            AppCommand(name, summary: summary, fields: [user] + fields) { input in
                let command = try command(input)
                let outcome = try await backend.fitness(command, user: try input.string("user", default: AppStreams.defaultKey))
                return .events(outcome.recorded, passedOver: outcome.passedOver)
            }
        }
        return [
            fitness("goal", "Sets the goal in steps.", [AppField("steps", .integer, "The goal, in steps.")]) { input in .setGoal(try input.int("steps")) },
            fitness("start", "Starts the workout.", []) { _ in .start },
            fitness("pause", "Pauses the workout.", []) { _ in .pause },
            fitness("restart", "Starts over.", []) { _ in .restart },
            fitness(
                "walk", "Reports steps from the pedometer.",
                [AppField("steps", .integer, "Steps walked."), AppField("distance", .number, required: false, "Meters walked (default 0).")]
            ) { input in
                .walk(steps: try input.int("steps"), distance: try input.double("distance", default: 0))
            },
            fitness("nessie", "Moves Nessie.", [AppField("meters", .number, "How far Nessie moves, in meters.")]) { input in
                .moveNessie(try input.double("meters"))
            },
            AppCommand(
                "post", app: "alerts", summary: "Queues an alert (a text already queued records nothing).",
                fields: [user, AppField("text", .string, "The alert's text."), AppField("severity", .string, required: false, "good or bad (default good).")]
            ) { input in
                let text = try input.string("text")
                let severityText = try input.string("severity", default: Severity.good.rawValue)
                guard let severity = Severity(rawValue: severityText) else {
                    throw input.invalid("severity", "The severity must be \"good\" or \"bad\".")
                }
                let outcome = try await backend.alerts(.post(text: text, severity: severity), user: try input.string("user", default: AppStreams.defaultKey))
                return .events(outcome.recorded, passedOver: outcome.passedOver)
            },
            AppCommand(
                "clear", app: "alerts", summary: "Clears one alert (its name or text), or all.",
                fields: [user, AppField("alert", .string, required: false, "The alert's name or text."), AppField("all", .boolean, required: false, "true clears every alert.")]
            ) { input in
                let alert = try input.optionalString("alert")
                let all = try input.bool("all", default: false)
                guard (alert == nil) == all else {
                    throw input.invalid("alert", "Name one alert (its name or text) in 'alert', or give \"all\": true.")
                }
                let command: AlertCommand = all ? .clearAll : .clear(alert ?? "")
                let outcome = try await backend.alerts(command, user: try input.string("user", default: AppStreams.defaultKey))
                return .events(outcome.recorded, passedOver: outcome.passedOver)
            },
        ]
    }
}
