import ArgumentParser
import EventStore
import Projections

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the log, its indexes and the projections; exits 69 when anything is wrong.",
        discussion: """
            Checks that positions run 1 to the head with no gap, every record decodes, each \
            stream's versions run 1, 2, ... in position order, every stream head matches its \
            records, every stream-index entry points to the record of that stream and version and \
            every record is indexed, the id table maps each record's id to its position and holds \
            nothing else, and every projection's checkpoint is at most the head. With --deep, each \
            projection's stored hash must equal that of a fold of the log up to its checkpoint. \
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
            let store = try self.store.openReadOnly()
            defer { store.close() }
            var report = try store.verify()
            // Only checks the projections' stored state: no rebuild, no catch-up.
            let runner = try await ProjectionRunner(store: store, projections: ProjectionCatalog.all, inspecting: true)
            try runner.verify(into: &report, deep: deep)
            if json {
                let problems: [JSONValue] = report.problems.map { ["check": .string($0.check), "detail": .string($0.detail)] }
                let object: JSONValue = [
                    "ok": .bool(report.isClean), "events": .uint(report.events), "streams": .uint(report.streams),
                    "headPosition": .uint(report.headPosition), "problems": .array(problems), "omittedProblems": .int(report.omittedProblems),
                ]
                Console.print(object.serialized)
            } else {
                if report.isClean {
                    Console.print("ok: \(report.events) events in \(report.streams) streams, head \(report.headPosition); indexes, ids and projections agree")
                }
                for problem in report.problems { Console.print("problem: \(problem)") }
                if report.omittedProblems > 0 { Console.print("... and \(report.omittedProblems) more problems") }
            }
            guard report.isClean else {
                let count = report.problems.count + report.omittedProblems
                throw CLIError(.storeUnavailable, "The store has \(count) problem\(count == 1 ? "" : "s"); restore it from a backup (see the report above).")
            }
        }
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
            let store = try self.store.openReadOnly()
            let head: UInt64
            do {
                defer { store.close() }
                head = try store.headPosition()
                try store.backup(to: destination, compact: compact)
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
                    "The copy in '\(destination)' does not open as a store (\(error.message)); it is kept, but run `esctl verify` on the store before trusting either.")
            }
            defer { copy.close() }
            var report = try copy.verify()
            // The projections' stored state too, as `esctl verify` checks it: no rebuild, no catch-up.
            let runner = try await ProjectionRunner(store: copy, projections: ProjectionCatalog.all, inspecting: true)
            try runner.verify(into: &report, deep: false)
            guard report.isClean else {
                for problem in report.problems { Console.print("problem: \(problem)") }
                let count = report.problems.count + report.omittedProblems
                throw CLIError(
                    .storeUnavailable,
                    "The copy in '\(destination)' has \(count) problem\(count == 1 ? "" : "s") (see the report above); it is kept, but run `esctl verify` on the store: when it has them too, restore from an older backup.")
            }
            Console.print("backed up \(store.path) to \(destination) (through position \(report.headPosition)); the copy verifies clean")
        }
    }
}
