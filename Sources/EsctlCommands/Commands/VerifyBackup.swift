import ArgumentParser
import Commands
import EventStore
import Projections
import AppModules

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the log, its indexes and the projections; exits 69 when anything is wrong.",
        discussion: """
            Checks that positions run 1 to the head with no gap, every record decodes, each \
            stream's versions run 1, 2, ... in position order, every stream head matches its \
            records, every stream-index entry points to the record of that stream and version and \
            every record is indexed, the id table maps each record's id to its position and holds \
            nothing else, and every projection's checkpoint is at most the head. With --deep, each \
            projection's stored hash must equal that of a fold of the log up to its checkpoint, and \
            each command snapshot the state its streams fold into through its versions. \
            Prints each problem; with --json one object {"ok","events","streams","headPosition", \
            "problems":[{"check","detail"}],"omittedProblems"}. Does not change the store.
            """)

    @OptionGroup var store: StoreOptions

    @Flag(help: "Also fold every projection again and compare its hash with the stored one.")
    var deep = false

    @Flag(help: "Print the report as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            // LMDB trusts its pages: read them all in a child process first, where a damaged page
            // that crashes LMDB is a report (the check "pages"), not a crash of verify.
            // PostgreSQL checks its own pages.
            switch self.store.isPostgres ? .clean : try await PageCheck.run(path: self.store.path) {
            case .clean:
                break
            case let .unopened(error):
                throw error
            case let .damaged(detail):
                var report = VerificationReport()
                report.add("pages", detail)
                print(report)
                throw CLIError(.storeUnavailable, "The store's data file is damaged; restore it from a backup (see the report above).")
            }
            let store = try await self.store.openReadOnly()
            return try await store.closingAfter {
                var report = try await store.verify()
                // Only checks the projections' stored state: no rebuild, no catch-up.
                let runner = try await ProjectionRunner(
                    store: store, projections: try self.store.projections(), inspecting: true, finishingRebuilds: false)
                // What is unfinished but not damage (an interrupted rebuild), said once.
                for notice in runner.notices { Console.note("\(Console.toolName): \(notice)\n") }
                try await runner.verify(into: &report, deep: deep)
                if deep {
                    // Snapshots are a cache, but one that disagrees with the log would decide wrongly.
                    // Every built-in app's deciders, whatever --apps chooses: a snapshot of an app left
                    // out is stored data all the same, not damage.
                    let apps = BuiltInApps.set
                    for snapshot in try await Snapshots.list(in: store) {
                        if let problem = try await apps.checkSnapshot(snapshot, in: store) { report.add("snapshots", problem) }
                    }
                }
                print(report)
                guard report.isClean else {
                    let count = report.problems.count + report.omittedProblems
                    throw CLIError(.storeUnavailable, "The store has \(count) problem\(count == 1 ? "" : "s"); restore it from a backup (see the report above).")
                }
            }
        }
    }
}

extension Verify {
    /// The report on standard output: `ok: ...` or one line per problem, or the JSON object.
    func print(_ report: VerificationReport) {
        if json {
            let problems: [JSONValue] = report.problems.map { ["check": .string($0.check), "detail": .string($0.detail)] }
            let object: JSONValue = [
                "ok": .bool(report.isClean), "events": .uint(report.events), "streams": .uint(report.streams),
                "headPosition": .uint(report.headPosition), "uncheckedRecords": .uint(report.uncheckedRecords),
                "problems": .array(problems), "omittedProblems": .int(report.omittedProblems),
            ]
            Console.printJSON(object.serialized)
            return
        }
        if report.isClean {
            let streams = report.streams == 1 ? "1 stream" : "\(report.streams) streams"
            let events = report.events == 1 ? "1 event" : "\(report.events) events"
            let unchecked = report.uncheckedRecords == 0
                ? "" : "; \(report.uncheckedRecords) records written before checksums could not be checked"
            Console.print("ok: \(events) in \(streams), head \(report.headPosition); checksums, indexes, ids and projections agree\(unchecked)")
        }
        for problem in report.problems { Console.print("problem: \(problem)") }
        if report.omittedProblems > 0 { Console.print("... and \(report.omittedProblems) more problems") }
    }
}

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the store, consistently, while writers keep writing.",
        discussion: """
            DEST must not exist or be an empty directory. The copy is one snapshot of the store \
            (events, indexes, projection tables) and opens as a store of its own; --compact \
            leaves out free pages (smaller, a little slower). The copy is then verified as \
            `esctl verify` (without --deep) does: a copy of a damaged store is damaged too, and \
            the command exits 69 saying so (the copy is kept); --no-verify skips this.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: ArgumentHelp("The directory to copy into.", valueName: "DEST"))
    var destination: String

    @Flag(help: "Leave out free pages.")
    var compact = false

    @Flag(name: .customLong("no-verify"), help: "Do not verify the copy.")
    var skipVerification = false

    func run() async throws {
        try await reportingErrors {
            // The read models the copy is verified with: an unknown app is refused before anything is copied.
            let projections = try self.store.projections()
            // A PostgreSQL database is backed up with PostgreSQL's own tools.
            if self.store.isPostgres {
                throw CLIError(
                    .invalidInput,
                    "backup copies a store directory; back up a PostgreSQL store with PostgreSQL's own tools (pg_dump, or a base backup with pg_basebackup).")
            }
            // LMDB trusts its pages: read them all in a child process first, where a damaged
            // page that crashes LMDB is a report and nothing is copied.
            switch try await PageCheck.run(path: self.store.path) {
            case .clean: break
            case let .unopened(error): throw error
            case let .damaged(detail): throw CLIError(.storeUnavailable, detail + " Nothing was copied.")
            }
            let store = try self.store.openDirectory(for: "backup", instead: "use pg_dump or pg_basebackup.")
            let head: UInt64
            do {
                head = try await store.closingAfter {
                    let head = try store.headPosition()
                    let (destination, compact) = (destination, compact)
                    try await Interrupts.cancellingOnSignals { try await store.backup(to: destination, compact: compact) }
                    return head
                }
            } catch is CancellationError {
                throw CLIError(Interrupts.exitStatus, "Interrupted: the backup was stopped and its partial copy in '\(destination)' removed.")
            }
            guard !skipVerification else {
                Console.print("backed up \(store.path) to \(destination) (at least through position \(head)); not verified")
                return
            }
            let copy: EventStore
            do {
                copy = try EventStore(path: destination, mode: .readOnly)
            } catch let error as EventStoreError {
                throw CLIError(
                    .storeUnavailable,
                    "The copy in '\(destination)' does not open as a store (\(error.message)); it is kept, but run `\(Console.toolName) verify` on the store before trusting either.")
            }
            try await copy.closingAfter {
                var report = try copy.verify()
                // The projections' stored state too, as `esctl verify` checks it: no rebuild, no catch-up.
                let runner = try await ProjectionRunner(store: copy, projections: projections, inspecting: true)
                try await runner.verify(into: &report, deep: false)
                guard report.isClean else {
                    for problem in report.problems { Console.print("problem: \(problem)") }
                    let count = report.problems.count + report.omittedProblems
                    throw CLIError(
                        .storeUnavailable,
                        "The copy in '\(destination)' has \(count) problem\(count == 1 ? "" : "s") (see the report above); it is kept, but run `\(Console.toolName) verify` on the store: when it has them too, restore from an older backup.")
                }
                Console.print("backed up \(store.path) to \(destination) (through position \(report.headPosition)); the copy verifies clean")
            }
        }
    }
}
