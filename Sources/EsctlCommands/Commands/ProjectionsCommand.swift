import ArgumentParser
import EventStore
import Projections
import AppModules
import WireFormat

struct ProjectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections",
        abstract: "List the registered projections and where they stand; pass over an event one cannot apply.",
        subcommands: [List.self, Skip.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the registered projections and where they stand (the default).",
            discussion: """
                For each: name, version, checkpoint (the last position applied), lag behind the \
                head, whether a (re)build is still under way, how many events it passed over, and \
                the hash of the stored state (SHA-256 of its canonical encoding, see \
                docs/FORMAT.md). Projections are not caught up first, so the lag shows how far \
                behind they are. With --json, one object per line with the keys name, version, \
                checkpoint, lag, building, hash, eventsSkipped and skippedPositions (the first 100 \
                passed-over events: position and reason), and rebuild: null, or, while a rebuild \
                runs beside the state that serves (whose checkpoint, lag and hash these are), \
                {"position","lag","eventsPerSecond"} of the new state (eventsPerSecond null in its \
                first second, or while it waits for its turn).
                """)

        @OptionGroup var store: StoreOptions

        @Flag(help: "Print one JSON object per projection and line.")
        var json = false

        func run() async throws {
            try await reportingErrors {
                // Where they stand, as they stand: nothing is caught up, rebuilt or finished here.
                let store = try await self.store.openReadOnly()
                return try await store.closingAfter {
                    let runner = try await ProjectionRunner(store: store, projections: try self.store.projections(), inspecting: true)
                    let statuses = try await runner.statuses()
                    if json {
                        for status in statuses {
                            Console.printJSON(ProjectionJSON.status(status))
                        }
                    } else {
                        let rows: [JSONValue] = statuses.map { status in
                            [
                                "name": .string(status.name), "version": .int(status.version), "checkpoint": .uint(status.checkpoint),
                                "lag": .uint(status.lag), "building": .bool(status.isBuilding), "skipped": .int(status.eventsSkipped),
                                "hash": .string(status.hash),
                            ]
                        }
                        JSONText.render(["projections": .array(rows)]).dropFirst().forEach(Console.print)
                        for status in statuses {
                            guard let rebuild = status.rebuild else { continue }
                            let rate = rebuild.positionsPerSecond.map { ", \(Int($0)) events/s" } ?? ""
                            Console.print(
                                "\(status.name) is being rebuilt beside the state that serves: at position \(rebuild.position), \(rebuild.lag) behind the head\(rate); the old state (at \(status.checkpoint)) answers queries until then.")
                        }
                        for status in statuses where !status.skippedPositions.isEmpty {
                            for entry in status.skippedPositions {
                                Console.print("\(status.name) passed over position \(entry.position): \(entry.reason)")
                            }
                            if status.eventsSkipped > status.skippedPositions.count {
                                Console.print("\(status.name) passed over \(status.eventsSkipped - status.skippedPositions.count) more (`--json` lists the first \(ProjectionStatus.listedSkips)).")
                            }
                        }
                    }
                }
            }
        }
    }

    struct Skip: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pass over one event in a projection stopped by it.",
            discussion: """
                The remedy for a projection that stopped at an event its code cannot apply (a \
                hand-appended event with bad data): records the decision as an event of the \
                store's own stream $projections, then catches the projection up past it. A rebuild \
                makes the same choice, and an export carries it. Only an event the projection has \
                not applied can be passed over (exit 64 otherwise), and only in a projection that \
                stops on errors (the others pass over such events by themselves and list them in \
                `esctl projections`). Prints the decision's position and the projection's new \
                checkpoint; with --json, an object with the keys projection, position, decision, \
                checkpoint.
                """)

        @OptionGroup var store: WritingStoreOptions

        @Argument(help: "The projection.")
        var name: String

        @Option(help: ArgumentHelp("The event to pass over.", valueName: "P"), transform: Numbers.unsigned("--position"))
        var position: UInt64

        @Option(help: ArgumentHelp("Why, for whoever reads the decision later.", valueName: "TEXT"))
        var reason = "passed over by an operator"

        @Flag(help: "Print the outcome as a JSON object.")
        var json = false

        func run() async throws {
            try await reportingErrors {
                let (store, runner) = try await self.store.openRunner()
                return try await store.closingAfter {
                    let decision = try await runner.passOver(name, position: position, reason: reason)
                    // Catch up past it now; the projection may stop again at a later event, which the
                    // checkpoint shows.
                    do {
                        _ = try await runner.catchUp([name])
                    } catch let stopped as ProjectionError where stopped.code == .stopped {
                        Console.note("\(Console.toolName): warning: \(TerminalText.safe(stopped.message))\n")
                    }
                    let checkpoint = try await runner.statuses().first { $0.name == name }?.checkpoint ?? 0
                    if json {
                        var object = JSONObjectWriter()
                        object.add("projection", name)
                        object.add("position", position)
                        object.add("decision", decision.position)
                        object.add("checkpoint", checkpoint)
                        Console.printJSON(object.finish())
                    } else {
                        Console.print("\(name) passes over position \(position) (decision recorded at position \(decision.position)); its checkpoint is \(checkpoint).")
                    }
                }
            }
        }
    }
}

struct Rebuild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rebuild projections from the start of the log.",
        discussion: """
            Folds the whole log again into a new state beside each named projection's current \
            one, which keeps answering queries (here and in other processes) until the new one \
            has caught up with the head; then one transaction swaps them and empties the old \
            tables. Projections fold in parallel, off the writer, so appends go on meanwhile. \
            Shows progress on a terminal (quiet when piped). Interrupted (Ctrl-C, a crash), the \
            old state goes on serving and the next command that opens the projections finishes \
            the rebuild. Then prints, per projection, the \
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
            return try await store.closingAfter {
                let progress = ProgressLine()
                let names = all ? nil : self.names
                let reports: [RebuildReport]
                do {
                    reports = try await Interrupts.cancellingOnSignals { try await runner.rebuild(names, progress: progress.report) }
                } catch is CancellationError {
                    progress.finish()
                    let reached = try await runner.statuses().filter { names?.contains($0.name) ?? true }.map { $0.rebuild?.position ?? $0.checkpoint }.min() ?? 0
                    throw CLIError(
                        Interrupts.exitStatus,
                        "Interrupted: the rebuild reached position \(reached) of \(try await store.headPosition()); the old state answers queries meanwhile, and `\(Console.toolName) rebuild` finishes it.")
                }
                progress.finish()
                for report in reports {
                    if json {
                        Console.printJSON(ProjectionJSON.report(report))
                    } else {
                        let seconds = String(format: "%.3f", report.seconds)
                        Console.print("\(report.projection): \(report.eventsApplied) events applied in \(seconds) s, hash \(report.hash)")
                    }
                }
            }
        }
    }
}

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a projection's state, caught up with every append made before.",
        discussion: """
            Each projection takes its own parameters, as options:
            \(parameterList)

            With --as-of P, the state as of position P, folded from the log without touching the \
            stored tables. With --min-position P (a position an append just returned), waits until \
            the projection has applied it, at most --timeout seconds (default 30), then answers: \
            a client reads its own writes even when another process appended them; exits 75 with \
            a sentence when the time runs out. A store this user may only read answers from a \
            projection that is caught up (as another process keeps it) and exits 69 with a sentence \
            saying how to catch it up otherwise. A parameter the projection does not take exits 64; an unknown \
            projection exits 67 and lists the known ones.
            """)

    /// Every projection's parameters, from their declarations (so a new projection's
    /// parameters need nothing here).
    static var parameterList: String {
        (BuiltInApps.set.projections + LogSummaries.all).map { projection in
            guard !projection.queryParameters.isEmpty else { return "  \(projection.name): no parameters" }
            return projection.queryParameters.map { "  \(projection.name) --\($0.name): \($0.help)" }.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    @OptionGroup var store: StoreOptions

    @Argument(help: "The projection to query.")
    var name: String

    @Option(name: .customLong("as-of"), help: ArgumentHelp("The state as of this position.", valueName: "P"), transform: Numbers.unsigned("--as-of"))
    var asOf: UInt64?

    @Option(
        name: .customLong("min-position"), help: ArgumentHelp("Wait until the projection has applied this position.", valueName: "P"),
        transform: Numbers.unsigned("--min-position"))
    var minPosition: UInt64?

    @Option(
        help: ArgumentHelp("With --min-position: how long to wait, in seconds (default 30).", valueName: "S"),
        transform: Numbers.decimal("--timeout", 0.001...31_536_000))
    var timeout: Double?

    @Flag(help: "Print the state as JSON.")
    var json = false

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("The projection's parameters, as --NAME VALUE or --NAME=VALUE (listed above).", valueName: "--NAME VALUE"))
    var parameterArguments: [String] = []

    /// The parameters given as `--name value` or `--name=value`. Throws ``CLIError`` for
    /// anything else.
    static func parameters(_ arguments: [String]) throws -> [String: String] {
        var parameters: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw CLIError(.invalidInput, "Unexpected argument '\(argument)'; give the projection's parameters as --NAME VALUE.")
            }
            let option = argument.dropFirst(2)
            let name: String
            let value: String
            if let equals = option.firstIndex(of: "=") {
                name = String(option[..<equals])
                value = String(option[option.index(after: equals)...])
                index += 1
            } else {
                guard index + 1 < arguments.count else {
                    throw CLIError(.invalidInput, "The parameter --\(option) needs a value.")
                }
                name = String(option)
                value = arguments[index + 1]
                index += 2
            }
            guard parameters.updateValue(value, forKey: name) == nil else {
                throw CLIError(.invalidInput, "The parameter --\(name) is given twice; give it once.")
            }
        }
        return parameters
    }

    private func print(_ result: JSONValue) {
        if json {
            Console.printJSON(result.serialized)
        } else {
            JSONText.render(result).forEach(Console.print)
        }
    }

    func validate() throws {
        if minPosition != nil && asOf != nil {
            throw ValidationError("Give --as-of (a state of the past) or --min-position (a state at least this recent), not both.")
        }
        if timeout != nil && minPosition == nil {
            throw ValidationError("--timeout bounds the wait of --min-position; give --min-position with it.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let parameters = try Self.parameters(parameterArguments)
            // Named as options here, so say so as options (the runner checks them too).
            if let projection = try self.store.projections().first(where: { $0.name == name }) {
                let known = projection.queryParameters.map(\.name)
                for given in parameters.keys.sorted() where !known.contains(given) {
                    let takes = known.isEmpty ? "it takes none" : "it takes " + known.map { "--\($0)" }.joined(separator: ", ")
                    throw CLIError(.invalidInput, "The projection '\(name)' takes no --\(given) option; \(takes).")
                }
            }
            if let asOf {
                // The past is folded from the log in memory: a read-only open does, and works
                // on a store this user may only read.
                let store = try await self.store.openReadOnly()
                return try await store.closingAfter {
                    let runner = try await ProjectionRunner(store: store, projections: try self.store.projections(), inspecting: true)
                    print(try await runner.query(name, parameters: QueryParameters(parameters), asOf: asOf))
                    return
                }
            }
            // A rebuild interrupted beside a whole old state is left for `esctl rebuild`: the
            // old state answers at once. A store this user may not write answers from the
            // projections that are caught up.
            let (store, runner) = try await self.store.openRunnerOrReading(announcing: false, finishingRebuilds: false)
            return try await store.closingAfter {
                let result: JSONValue
                if let minPosition {
                    result = try await runner.query(
                        name, parameters: QueryParameters(parameters), minPosition: minPosition, timeout: .seconds(timeout ?? 30))
                } else {
                    result = try await runner.query(name, parameters: QueryParameters(parameters))
                }
                print(result)
            }
        }
    }
}
