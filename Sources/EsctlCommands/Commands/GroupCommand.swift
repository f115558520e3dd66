import ArgumentParser
import ConsumerGroups
import EventStore
import Foundation
import Synchronization
import WireFormat

/// `esctl group create|consume|show|parked|replay-parked|delete`: consumer groups from the shell.
struct GroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group",
        abstract: "Share the handling of events among processes: consumer groups.",
        discussion: """
            A group delivers each event (of the log, a category or a query) to one of its \
            members, at least once, in order per partition (events of one stream, or of one tag \
            with a prefix, share a partition), and parks an event after --max-tries failed tries. \
            Members hold leases on partitions, renewed at each poll: a member that stops (killed, \
            or its machine gone) loses them when they expire, and another member takes its \
            partitions at their checkpoints. State lives in the store (table $groups).
            """,
        subcommands: [GroupCreate.self, GroupConsume.self, GroupShow.self, GroupParked.self, GroupReplayParked.self, GroupDelete.self])
}

/// `esctl group create NAME [--category C | --query JSON] [--partition-by stream|tag:PREFIX] [--max-tries N]`.
struct GroupCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a consumer group.",
        discussion: """
            Prints "group NAME created", or "group NAME exists already" (exit 0) when one of that \
            name and definition exists; another definition of the name exits 65.
            """)

    @OptionGroup var store: WritingStoreOptions
    @Argument(help: "The group's name.") var name: String
    @Option(help: ArgumentHelp("Consume only this category's events (streams CATEGORY-...).", valueName: "C")) var category: String?
    @Option(help: ArgumentHelp("Consume only the events a query matches: [{\"types\":[...],\"tags\":[...]},...] or @FILE.", valueName: "JSON|@FILE"))
    var query: String?
    @Option(
        name: .customLong("partition-by"), help: ArgumentHelp("What orders events: stream (default) or tag:PREFIX (their first tag with PREFIX).", valueName: "stream|tag:PREFIX"))
    var partitionBy: String = "stream"
    @Option(help: ArgumentHelp("Partitions the keys hash into, 1 to 256: the most members working at once.", valueName: "N"), transform: Numbers.whole("--partitions", 1...256))
    var partitions: Int = 16
    @Option(name: .customLong("max-tries"), help: ArgumentHelp("Failed tries before an event is parked, 1 to 1000.", valueName: "N"), transform: Numbers.whole("--max-tries", 1...1_000))
    var maxTries: Int = 5
    @Option(name: .customLong("lease"), help: ArgumentHelp("How long a lease lasts without renewal, in seconds.", valueName: "SECONDS"), transform: Numbers.whole("--lease", 1...86_400))
    var lease: Int = 10

    func validate() throws {
        if category != nil && query != nil { throw ValidationError("Give --category or --query, not both.") }
        if partitionBy != "stream" && !partitionBy.hasPrefix("tag:") {
            throw ValidationError("--partition-by takes stream or tag:PREFIX; '\(partitionBy)' is neither.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            var source = GroupDefinition.Source.log
            if let category { source = .category(category) }
            if let query { source = .query(try QueryJSON.query([UInt8](InputText.bytes(query, what: "--query")))) }
            let key: GroupDefinition.PartitionKey = partitionBy == "stream" ? .stream : .tagPrefix(String(partitionBy.dropFirst(4)))
            let definition = GroupDefinition(
                name: name, source: source, partitionBy: key, partitions: partitions, maxTries: maxTries, leaseDuration: .seconds(lease))
            try definition.validate()
            let store = try await self.store.open()
            return try await store.closingAfter {
                let created = try await ConsumerGroups(store: store).create(definition)
                Console.print(created ? "group \(name) created" : "group \(name) exists already")
            }
        }
    }
}

/// `esctl group consume NAME --member M --exec COMMAND`.
struct GroupConsume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consume",
        abstract: "Join a group and run a command once per delivery.",
        discussion: """
            Runs COMMAND with /bin/sh once per delivery, the event's JSON (as replay --json \
            prints it) on its standard input and ESCTL_GROUP, ESCTL_MEMBER, ESCTL_POSITION and \
            ESCTL_ATTEMPT in its environment. Exit 0 acknowledges the event; any other status \
            retries it at the next poll, and parks it after the group's --max-tries. Prints one \
            line per delivery, "POSITION STREAM@VERSION TYPE OUTCOME" (acknowledged, retried, \
            parked, or lost when its partition moved to another member meanwhile, which delivers \
            it again); with --json {"position","stream","version","type","partition","attempt",\
            "replay","outcome","status"}. With --count N it leaves the group and exits 0 after N \
            deliveries; with --timeout it exits 75 when the time runs out; Ctrl-C (or SIGTERM) \
            stops the running command (SIGTERM), leaves its delivery unsettled, leaves the group \
            (its partitions go to the other members at once) and exits 130 (143). --poll must be \
            at most a third of the group's lease.
            """)

    @OptionGroup var store: WritingStoreOptions
    @Argument(help: "The group's name.") var name: String
    @Option(help: ArgumentHelp("This member's name, unique among the group's living members.", valueName: "M")) var member: String
    @Option(help: ArgumentHelp("The shell command to run per delivery.", valueName: "COMMAND")) var exec: String
    @Option(help: ArgumentHelp("Exit 0 after N deliveries.", valueName: "N"), transform: Numbers.whole("--count", 1...Int.max)) var count: Int?
    @Option(help: ArgumentHelp("Exit 75 after SECONDS.", valueName: "SECONDS"), transform: Numbers.decimal("--timeout", 0.001...31_536_000))
    var timeout: Double?
    @Option(name: .customLong("poll"), help: ArgumentHelp("Seconds between polls (lease renewals).", valueName: "SECONDS"), transform: Numbers.decimal("--poll", 0.01...3_600))
    var poll: Double = 1
    @Flag(help: "Print each delivery and its outcome as JSON.") var json = false

    func run() async throws {
        try await reportingErrors {
            // A command that exits without reading its input must not take esctl down with it.
            signal(SIGPIPE, SIG_IGN)
            let store = try await self.store.open()
            return try await store.closingAfter {
                let member = try await ConsumerGroups(store: store).join(name, member: self.member, pollInterval: .seconds(poll))
                let handled = Atomic<Int>(0)
                let ending = Mutex<Int32?>(nil)
                let running = RunningCommand()
                let wanted = count
                let (group, memberName, command, json) = (name, self.member, exec, self.json)
                let consumer = Task {
                    for try await delivery in member {
                        let status = try await running.run(command, delivery: delivery, group: group, member: memberName)
                        // Stopped (Ctrl-C, SIGTERM, --timeout) while the command ran: not settled.
                        if Task.isCancelled { return }
                        let settlement: Settlement
                        do {
                            if status == 0 {
                                try await delivery.acknowledge()
                                settlement = .acknowledged
                            } else {
                                settlement = try await delivery.nack(.retry)
                            }
                        } catch let error as ConsumerGroupError where error.code == .leaseLost || error.code == .alreadySettled {
                            // Its partition moved to another member (a lease that lapsed), which delivers it again.
                            Self.report(delivery, nil, status: status, json: json)
                            continue
                        }
                        Self.report(delivery, settlement, status: status, json: json)
                        if handled.add(1, ordering: .relaxed).newValue >= wanted ?? .max { return }
                    }
                }
                let interrupt = Interrupts.onSignals {
                    ending.withLock { $0 = $0 ?? Interrupts.exitStatus.rawValue }
                    consumer.cancel()
                    running.terminate()
                }
                defer { interrupt.cancel() }
                var timer: Task<Void, any Error>?
                if let timeout {
                    timer = Task {
                        try await Task.sleep(for: .seconds(timeout))
                        ending.withLock { $0 = $0 ?? ExitStatus.timedOut.rawValue }
                        consumer.cancel()
                        running.terminate()
                    }
                }
                defer { timer?.cancel() }
                let outcome = await consumer.result
                await member.leave()
                let total = handled.load(ordering: .relaxed)
                if let wanted, total >= wanted { return }
                if case let .failure(error) = outcome, !(error is CancellationError) { throw error }
                switch ending.withLock({ $0 }) {
                case ExitStatus.timedOut.rawValue?:
                    let seconds = timeout.map { $0 == $0.rounded() ? String(Int($0)) : String($0) } ?? "?"
                    throw CLIError(.timedOut, "Timed out after \(seconds) s: \(total) deliver\(total == 1 ? "y" : "ies") handled.")
                case let status?:
                    throw ExitCode(status)
                case nil:
                    return
                }
            }
        }
    }

    /// One line per delivery; a nil settlement is one this member could no longer record ("lost").
    static func report(_ delivery: Delivery, _ settlement: Settlement?, status: Int32, json: Bool) {
        let outcome: String
        switch settlement {
        case .acknowledged?: outcome = "acknowledged"
        case .retried?: outcome = "retried"
        case .parked?: outcome = "parked"
        case .skipped?: outcome = "skipped"
        case nil: outcome = "lost"
        }
        let event = delivery.event
        if json {
            var object = JSONObjectWriter()
            object.add("position", event.position)
            object.add("stream", event.stream)
            object.add("version", event.version)
            object.add("type", event.type)
            object.add("partition", UInt64(delivery.partition))
            object.add("attempt", UInt64(delivery.attempt))
            object.add("replay", delivery.isReplay)
            object.add("outcome", outcome)
            object.add("status", UInt64(UInt32(bitPattern: status)))
            Console.printJSON(object.finish())
        } else {
            Console.print("\(event.position) \(event.stream)@\(event.version) \(event.type) \(outcome)")
        }
        Console.flush()
    }
}

/// The command running for a delivery, which a signal or the timeout stops (SIGTERM).
final class RunningCommand: Sendable {
    private let current = Mutex<Process?>(nil)

    /// Runs `command` with /bin/sh, the event's JSON on its standard input, on a thread of its
    /// own (the member's lease renewals go on meanwhile); its exit status.
    func run(_ command: String, delivery: Delivery, group: String, member: String) async throws -> Int32 {
        try await onOwnThread(named: "esctl.consume-command") { [self] in
            try runBlocking(command, delivery: delivery, group: group, member: member)
        }
    }

    private func runBlocking(_ command: String, delivery: Delivery, group: String, member: String) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["ESCTL_GROUP"] = group
        environment["ESCTL_MEMBER"] = member
        environment["ESCTL_POSITION"] = String(delivery.event.position)
        environment["ESCTL_ATTEMPT"] = String(delivery.attempt)
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        try process.run()
        current.withLock { $0 = process }
        defer { current.withLock { $0 = nil } }
        // A command that does not read its input must not block the write (EPIPE is ignored).
        try? input.fileHandleForWriting.write(contentsOf: Data((EventJSON.line(delivery.event) + "\n").utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Stops the running command, if any (SIGTERM).
    func terminate() {
        current.withLock { process in
            if let process, process.isRunning { process.terminate() }
        }
    }
}

/// `esctl group show NAME [--json]`.
struct GroupShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a group's members, partitions, checkpoint, lag and parked count.",
        discussion: """
            Prints the definition, the living members, each partition's holder and checkpoint, \
            the group's checkpoint (every event through it is settled), its lag behind the head \
            and the parked count; with --json {"name","source","partitionBy","partitions","maxTries",\
            "members","checkpoint","head","lag","parked","partitionStates":[{"partition","member","checkpoint"}]}.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The group's name.") var name: String
    @Flag(help: "Print the state as JSON.") var json = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openExisting()
            return try await store.closingAfter {
                let status = try await ConsumerGroups(store: store).status(name)
                let definition = status.definition
                let source: String
                switch definition.source {
                case .log: source = "log"
                case let .category(category): source = "category \(category)"
                case .query: source = "query"
                }
                let partitionBy: String
                switch definition.partitionBy {
                case .stream: partitionBy = "stream"
                case let .tagPrefix(prefix): partitionBy = "tag:" + prefix
                }
                if json {
                    var object = JSONObjectWriter()
                    object.add("name", definition.name)
                    object.add("source", source)
                    object.add("partitionBy", partitionBy)
                    object.add("partitions", UInt64(definition.partitions))
                    object.add("maxTries", UInt64(definition.maxTries))
                    object.add("members", rawJSON: "[" + status.members.map(JSONWriter.quote).joined(separator: ",") + "]")
                    object.add("checkpoint", status.checkpoint)
                    object.add("head", status.head)
                    object.add("lag", status.lag)
                    object.add("parked", UInt64(status.parked))
                    object.add(
                        "partitionStates",
                        rawJSON: "[" + status.partitions.map { partition in
                            var item = JSONObjectWriter()
                            item.add("partition", UInt64(partition.partition))
                            item.add("member", partition.member)
                            item.add("checkpoint", partition.checkpoint)
                            return item.finish()
                        }.joined(separator: ",") + "]")
                    Console.printJSON(object.finish())
                    return
                }
                Console.print("group \(definition.name): \(source), partitioned by \(partitionBy) into \(definition.partitions), parked after \(definition.maxTries) tries")
                Console.print("members: \(status.members.isEmpty ? "none" : status.members.joined(separator: ", "))")
                Console.print("checkpoint \(status.checkpoint), head \(status.head), lag \(status.lag), parked \(status.parked)")
                for partition in status.partitions {
                    Console.print("  partition \(partition.partition): \(partition.member ?? "-") at \(partition.checkpoint)")
                }
            }
        }
    }
}

/// `esctl group parked NAME [--json]`.
struct GroupParked: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parked", abstract: "List a group's parked events.",
        discussion: """
            One line per parked event, "POSITION STREAM TYPE tries N: REASON" (with "(replay \
            pending)" when marked for replay); with --json one object per line \
            {"position","stream","type","partition","reason","tries","replay"}.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The group's name.") var name: String
    @Flag(help: "Print one JSON object per line.") var json = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openExisting()
            return try await store.closingAfter {
                for event in try await ConsumerGroups(store: store).parked(name) {
                    if json {
                        var object = JSONObjectWriter()
                        object.add("position", event.position)
                        object.add("stream", event.stream)
                        object.add("type", event.type)
                        object.add("partition", UInt64(event.partition))
                        object.add("reason", event.reason)
                        object.add("tries", UInt64(event.tries))
                        object.add("replay", event.replay)
                        Console.printJSON(object.finish())
                    } else {
                        Console.print("\(event.position) \(event.stream) \(event.type) tries \(event.tries): \(event.reason)\(event.replay ? " (replay pending)" : "")")
                    }
                }
            }
        }
    }
}

/// `esctl group replay-parked NAME [--position P]`.
struct GroupReplayParked: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay-parked", abstract: "Deliver parked events again, without moving any checkpoint back.",
        discussion: """
            Marks the parked event at --position (or every one) for delivery to the member \
            holding its partition; acknowledged, it leaves the parked list. Prints how many were \
            marked; exit 67 when --position is not parked.
            """)

    @OptionGroup var store: WritingStoreOptions
    @Argument(help: "The group's name.") var name: String
    @Option(help: ArgumentHelp("Replay only the event parked at P.", valueName: "P"), transform: Numbers.unsigned("--position")) var position: UInt64?

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openExisting()
            return try await store.closingAfter {
                let marked = try await ConsumerGroups(store: store).replayParked(name, position: position)
                Console.print("\(marked) parked event\(marked == 1 ? "" : "s") marked for replay")
            }
        }
    }
}

/// `esctl group delete NAME`.
struct GroupDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a group and all its state (checkpoints, leases, parked events).")

    @OptionGroup var store: WritingStoreOptions
    @Argument(help: "The group's name.") var name: String

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openExisting()
            return try await store.closingAfter {
                try await ConsumerGroups(store: store).delete(name)
                Console.print("group \(name) deleted")
            }
        }
    }
}
