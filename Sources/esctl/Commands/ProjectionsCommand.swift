import ArgumentParser
import EventStore
import Projections
import Apps
import WireFormat

struct ProjectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections",
        abstract: "List the registered projections and where they stand.",
        discussion: """
            For each: name, version, checkpoint (the last position applied), lag behind the head, \
            whether a (re)build is still under way, and the hash of the stored state (SHA-256 of \
            its canonical encoding, see docs/FORMAT.md). Projections are not caught up first, so \
            the lag shows how far behind they are. With --json, one object per line with the keys \
            name, version, checkpoint, lag, building, hash.
            """)

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print one JSON object per projection and line.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            // Where they stand, as they stand: nothing is caught up, rebuilt or finished here.
            let store = try self.store.openReadOnly()
            defer { store.close() }
            let runner = try await ProjectionRunner(store: store, projections: AppCatalog.all, inspecting: true)
            let statuses = try runner.statuses()
            if json {
                for status in statuses {
                    var object = JSONObjectWriter()
                    object.add("name", status.name)
                    object.add("version", status.version)
                    object.add("checkpoint", status.checkpoint)
                    object.add("lag", status.lag)
                    object.add("building", status.isBuilding)
                    object.add("hash", status.hash)
                    Console.printJSON(object.finish())
                }
            } else {
                let rows: [JSONValue] = statuses.map { status in
                    [
                        "name": .string(status.name), "version": .int(status.version), "checkpoint": .uint(status.checkpoint),
                        "lag": .uint(status.lag), "building": .bool(status.isBuilding), "hash": .string(status.hash),
                    ]
                }
                JSONText.render(["projections": .array(rows)]).dropFirst().forEach(Console.print)
            }
        }
    }
}

struct Rebuild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rebuild projections from the start of the log.",
        discussion: """
            Empties each named projection's tables and folds the whole log into them again, \
            showing progress on a terminal (quiet when piped). Then prints, per projection, the \
            events applied, the seconds taken and the state hash; with --json one object per line \
            with the keys name, eventsApplied, eventsSkipped, checkpoint, seconds, hash.
            """)

    @OptionGroup var store: WritingStoreOptions

    @Argument(help: "The projections to rebuild.")
    var names: [String] = []

    @Flag(help: "Rebuild every projection.")
    var all = false

    @Flag(help: "Print one JSON object per projection and line.")
    var json = false

    func validate() throws {
        if names.isEmpty && !all { throw ValidationError("Name the projections to rebuild, or give --all.") }
        if !names.isEmpty && all { throw ValidationError("Give either projection names or --all, not both.") }
    }

    func run() async throws {
        try await reportingErrors {
            let (store, runner) = try await self.store.openRunner()
            defer { store.close() }
            let progress = ProgressLine()
            let names = all ? nil : self.names
            let reports: [RebuildReport]
            do {
                reports = try await Interrupts.cancellingOnSignals { try await runner.rebuild(names, progress: progress.report) }
            } catch is CancellationError {
                progress.finish()
                let reached = try runner.statuses().filter { names?.contains($0.name) ?? true }.map(\.checkpoint).min() ?? 0
                throw CLIError(
                    Interrupts.exitStatus,
                    "Interrupted: the rebuild reached position \(reached) of \(try store.headPosition()); the next command that opens the projections (query, projections, rebuild) finishes it.")
            }
            progress.finish()
            for report in reports {
                if json {
                    var object = JSONObjectWriter()
                    object.add("name", report.projection)
                    object.add("eventsApplied", report.eventsApplied)
                    object.add("eventsSkipped", report.eventsSkipped)
                    object.add("checkpoint", report.checkpoint)
                    object.add("seconds", rawJSON: JSONWriter.number((report.seconds * 1000).rounded() / 1000))
                    object.add("hash", report.hash)
                    Console.printJSON(object.finish())
                } else {
                    let seconds = String(format: "%.3f", report.seconds)
                    Console.print("\(report.projection): \(report.eventsApplied) events applied in \(seconds) s, hash \(report.hash)")
                }
            }
        }
    }
}

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a projection's state, caught up with every append made before.",
        discussion: """
            The projections: app-state (--user), alerts (--user), messages (--room), campers, \
            campsites, reservations (--campground; reservations also --camper, --site, --date), and \
            the examples count-by-type and stream-summary (--category). With --as-of P, the state as \
            of position P, folded from the log without touching the stored tables. Each projection \
            takes only the parameters it understands (others exit 64). Unknown projection names \
            exit 67 and list the known ones.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The projection to query.")
    var name: String

    @Option(name: .customLong("as-of"), help: ArgumentHelp("The state as of this position.", valueName: "P"), transform: Numbers.unsigned("--as-of"))
    var asOf: UInt64?

    @Option(help: ArgumentHelp("The user (app-state, alerts; default: default).", valueName: "U"))
    var user: String?

    @Option(help: ArgumentHelp("The chat room (messages; default: default).", valueName: "R"))
    var room: String?

    @Option(help: ArgumentHelp("The campground (campers, campsites, reservations; default: default).", valueName: "C"))
    var campground: String?

    @Option(help: ArgumentHelp("Only this camper's reservations.", valueName: "ID"))
    var camper: String?

    @Option(help: ArgumentHelp("Only this site's reservations.", valueName: "N"))
    var site: String?

    @Option(help: ArgumentHelp("Only the Reserved stays covering this date (dateFrom <= D < dateTo).", valueName: "YYYY-MM-DD"))
    var date: String?

    @Option(help: ArgumentHelp("Only streams starting with this prefix (stream-summary).", valueName: "PREFIX"))
    var category: String?

    @Flag(help: "Print the state as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let (store, runner) = try await self.store.openRunner()
            defer { store.close() }
            var parameters: [String: String] = [:]
            let given: [(String, String?)] = [
                ("user", user), ("room", room), ("campground", campground), ("camper", camper), ("site", site),
                ("date", date), ("category", category),
            ]
            for case let (name, value?) in given { parameters[name] = value }
            let result = try await runner.query(name, parameters: QueryParameters(parameters), asOf: asOf)
            if json {
                Console.printJSON(result.serialized)
            } else {
                JSONText.render(result).forEach(Console.print)
            }
        }
    }
}
