import ArgumentParser
import Commands
import EventStore
import Projections
import WireFormat

/// `esctl snapshots`: the command side's snapshots of deciders' states (a cache: dropping them
/// changes no outcome, only how much the next commands read).
struct SnapshotsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshots",
        abstract: "List the snapshots of the apps' command state, or drop them.",
        discussion: """
            Commands read a decider's latest snapshot and only the events after it; a snapshot is \
            written with the append that brings the events since the last one to 100. Lists each \
            snapshot: the decider, its version, each stream with the version the state folds \
            through, and the stored size; with --json one object per line with the keys decider, \
            deciderVersion, streams ([{"stream","version"}]) and size. --drop removes them all, or \
            with a stream those whose streams include it: the next commands fold from the first \
            event and write new ones when due. `esctl verify --deep` checks each against the log.
            """)

    @OptionGroup var store: StoreOptions

    @Flag(help: "Remove the snapshots (all, or those of STREAM) instead of listing them.")
    var drop = false

    @Argument(help: ArgumentHelp("With --drop: only the snapshots whose streams include this one.", valueName: "STREAM"))
    var stream: String?

    @Flag(help: "Print one JSON object per snapshot and line (with --drop: {\"dropped\":N}).")
    var json = false

    func validate() throws {
        if stream != nil && !drop { throw ValidationError("A stream narrows --drop; give --drop with it, or no stream to list every snapshot.") }
    }

    func run() async throws {
        try await reportingErrors {
            if drop {
                let store = try await self.store.open(.existing)
                return try await store.closingAfter {
                    let dropped = try await Snapshots.drop(in: store, stream: stream)
                    if json {
                        var object = JSONObjectWriter()
                        object.add("dropped", dropped)
                        Console.printJSON(object.finish())
                    } else {
                        Console.print("dropped \(dropped) snapshot\(dropped == 1 ? "" : "s")")
                    }
                    return
                }
            }
            let store = try await self.store.openReadOnly()
            return try await store.closingAfter {
                let snapshots = try await Snapshots.list(in: store)
                if json {
                    for snapshot in snapshots {
                        var object = JSONObjectWriter()
                        object.add("decider", snapshot.decider)
                        object.add("deciderVersion", Int(snapshot.deciderVersion))
                        object.add("streams", rawJSON: JSONValue.array(snapshot.versions.map { ["stream": .string($0.stream), "version": .uint($0.version)] }).serialized)
                        object.add("size", snapshot.size)
                        Console.printJSON(object.finish())
                    }
                } else if snapshots.isEmpty {
                    Console.print("no snapshots")
                } else {
                    let rows: [JSONValue] = snapshots.map { snapshot in
                        [
                            "decider": .string(snapshot.decider), "version": .int(Int(snapshot.deciderVersion)),
                            "streams": .string(snapshot.versions.map { "\($0.stream)@\($0.version)" }.joined(separator: " ")),
                            "size": .int(snapshot.size),
                        ]
                    }
                    JSONText.render(["snapshots": .array(rows)]).dropFirst().forEach(Console.print)
                }
            }
        }
    }
}
