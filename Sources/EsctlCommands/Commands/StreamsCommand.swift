import ArgumentParser
import EventStore
import Foundation
import WireFormat

/// `esctl streams delete|retention|show`: deleting streams, their retention policies, and what
/// the store knows of one.
struct StreamsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streams",
        abstract: "Delete a stream, set its retention policy, or show what the store knows of it.",
        discussion: """
            A deletion removes events from the log and every index in one transaction, and \
            records it with a $StreamDeleted event in the stream $deletions; positions are never \
            reused and deleted events' ids stay known. See also `esctl purge`.
            """,
        subcommands: [StreamsDelete.self, StreamsRetention.self, StreamsShow.self])
}

/// `esctl streams delete STREAM [--expected-version V] [--hard]`.
struct StreamsDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a stream's events (soft: it may be recreated; --hard: tombstoned for good).",
        discussion: """
            Removes every event of STREAM from the log and from every index in one transaction, \
            with the command snapshots that name it, and appends a $StreamDeleted event recording \
            the versions removed. After a soft delete, an append recreates the stream and \
            continues its version numbers; after --hard, every append to it is refused (exit 1). \
            Appending a deleted event's id again answers "already recorded" and writes nothing. \
            Prints what was removed; with --json one object {"stream","fromVersion","toVersion",\
            "count","hard","reason","types","position"}. Exit 65 when --expected-version does not \
            hold, 67 for a stream with no events (--hard still tombstones a stream whose events \
            were all deleted), 1 for a tombstoned one.
            """)

    @OptionGroup var store: WritingStoreOptions

    @Argument(help: "The stream to delete.")
    var stream: String

    @Option(
        name: .customLong("expected-version"), help: ArgumentHelp("any, no-stream, exists, or the stream's current version N.", valueName: "VERSION"),
        transform: ExpectedVersionOption.parse)
    var expectedVersion: ExpectedVersionOption?

    @Flag(help: "Tombstone the stream: it refuses every later append, and its name cannot be used again.")
    var hard = false

    @Flag(help: "Print the deletion as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openExisting()
            return try await store.closingAfter {
                let deletion = try await store.deleteStream(stream, expectedVersion: expectedVersion?.value ?? .any, hard: hard)
                DeletionOutput.print([deletion], json: json)
            }
        }
    }
}

/// `esctl streams retention STREAM [--max-count N] [--max-age DURATION] [--truncate-before V]`.
struct StreamsRetention: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Set a stream's retention policy (none given: clear it).",
        discussion: """
            Events beyond the policy are removed by the writer in the transaction of the stream's \
            next append, and for every stream by `esctl purge`; setting it removes nothing. \
            DURATION is a number with a unit: ms, s, m, h, d or w (90d, 12h, 30m); a plain number \
            is seconds. Prints the policy set; with --json {"stream","retention"} (null when \
            cleared). Exit 1 for a tombstoned stream, 67 for one that never had an event.
            """)

    @OptionGroup var store: WritingStoreOptions

    @Argument(help: "The stream.")
    var stream: String

    @Option(
        name: .customLong("max-count"), help: ArgumentHelp("Keep at most N of the newest events (1 or more).", valueName: "N"),
        transform: Numbers.unsigned("--max-count", from: 1))
    var maxCount: UInt64?

    @Option(
        name: .customLong("max-age"), help: ArgumentHelp("Keep events at most this old (90d, 12h, 30m, 45s, 500ms).", valueName: "DURATION"),
        transform: DurationText.parse)
    var maxAge: Duration?

    @Option(
        name: .customLong("truncate-before"), help: ArgumentHelp("Remove every version before V (1 or more).", valueName: "V"),
        transform: Numbers.unsigned("--truncate-before", from: 1))
    var truncateBefore: UInt64?

    @Flag(help: "Print the policy set as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openExisting()
            return try await store.closingAfter {
                let policy = RetentionPolicy(maxCount: maxCount, maxAge: maxAge, truncateBefore: truncateBefore)
                try await store.setRetention(policy, for: stream)
                if json {
                    var object = JSONObjectWriter()
                    object.add("stream", stream)
                    object.add("retention", rawJSON: DeletionJSON.policy(policy.isEmpty ? nil : policy))
                    Console.printJSON(object.finish())
                } else {
                    Console.print("\(stream): retention \(policy.description)")
                }
            }
        }
    }
}

/// `esctl streams show STREAM [--json]`.
struct StreamsShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print a stream's version, event count, first version, tombstone and retention policy.",
        discussion: """
            With --json one object {"stream","version","firstVersion","eventCount","tombstoned",\
            "retention":{"maxCount","maxAgeSeconds","truncateBefore"} or null}. Exit 67 for a \
            stream that never had an event.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The stream.")
    var stream: String

    @Flag(help: "Print it as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            try Limits.validateName(stream, kind: "stream")
            let store = try await self.store.openReadOnly()
            return try await store.closingAfter {
                guard let info = try await store.streamInfo(stream) else {
                    throw CLIError(.notFound, "The stream '\(stream)' has no events; check its name (`\(Console.toolName) replay` lists every event).")
                }
                if json {
                    Console.printJSON(DeletionJSON.object(info))
                } else {
                    let rows: [(String, String)] = [
                        ("stream", info.stream), ("version", String(info.version)), ("first version", String(info.firstVersion)),
                        ("events", String(info.eventCount)), ("tombstoned", info.isTombstoned ? "yes" : "no"),
                        ("retention", info.retention?.description ?? "none"),
                    ]
                    for (name, value) in rows { Console.print(name.padded(to: 16) + value) }
                }
            }
        }
    }
}

/// `esctl purge [--json]`.
struct Purge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply every stream's retention policy now, and print what it removed.",
        discussion: """
            One transaction removes, from every stream with a retention policy, the events beyond \
            it (each stream's removal recorded by a $StreamDeleted event in that transaction). Prints one line per stream \
            trimmed ("nothing to remove" when none); with --json one object \
            {"removed":N,"deletions":[{"stream","fromVersion","toVersion","count","hard","reason","types","position"}]}.
            """)

    @OptionGroup var store: WritingStoreOptions

    @Flag(help: "Print what was removed as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openExisting()
            return try await store.closingAfter {
                let deletions = try await store.purge()
                if json {
                    Console.printJSON(DeletionJSON.purge(deletions))
                } else if deletions.isEmpty {
                    Console.print("nothing to remove")
                } else {
                    DeletionOutput.print(deletions, json: false)
                }
            }
        }
    }
}

/// How esctl prints deletions.
enum DeletionOutput {
    static func print(_ deletions: [StreamDeletion], json: Bool) {
        for deletion in deletions {
            if json {
                Console.printJSON(DeletionJSON.object(deletion))
                continue
            }
            let range = deletion.count == 0 ? "no events" : "versions \(deletion.fromVersion)...\(deletion.toVersion) (\(deletion.count) event\(deletion.count == 1 ? "" : "s"))"
            let how = deletion.hard ? ", tombstoned" : ""
            Console.print("\(deletion.stream): removed \(range)\(how); recorded at position \(deletion.position)")
        }
    }
}

/// Durations as esctl reads them: a number and a unit (`RetentionPolicy` prints them back).
enum DurationText {
    private static let units: [(String, Int64)] = [("ms", 1_000), ("s", 1_000_000), ("m", 60_000_000), ("h", 3_600_000_000), ("d", 86_400_000_000), ("w", 604_800_000_000)]

    @Sendable static func parse(_ text: String) throws -> Duration {
        let unit = units.first { text.hasSuffix($0.0) && Int64(text.dropLast($0.0.count)) != nil }
        let number = Int64(unit.map { String(text.dropLast($0.0.count)) } ?? text)
        guard let number, number > 0 else {
            throw ValidationError("--max-age takes a positive whole number, with a unit (ms, s, m, h, d or w: 90d, 12h) or without (seconds); '\(text)' is not one.")
        }
        let micros = number.multipliedReportingOverflow(by: unit?.1 ?? 1_000_000)
        guard !micros.overflow else { throw ValidationError("--max-age '\(text)' is too long; give at most 100000 years.") }
        return .microseconds(micros.partialValue)
    }
}
