import ArgumentParser
import EventStore

struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the whole log in position order, optionally filtered.",
        discussion: """
            One line per event: POSITION  STREAM@VERSION  TYPE  RECORDED-AT  DATA. With --json, one \
            object per line with the keys position, stream, version, id, type, data (the JSON value \
            itself), metadata (JSON, or null when empty) and recordedAt (ISO 8601, UTC), and \
            schemaVersion when the event was recorded in a version other than 1. Data that is \
            not JSON appears as a base64 string with "dataEncoding":"base64". Events are shown \
            upcast to their type's newest shape (their schemaVersion still the recorded one); \
            --as-stored shows them as recorded.
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("The first position to print.", valueName: "P"), transform: Numbers.unsigned("--from"))
    var from: UInt64 = 1

    @Option(help: ArgumentHelp("The last position to print (default: the head).", valueName: "P"), transform: Numbers.unsigned("--to"))
    var to: UInt64?

    @OptionGroup var filters: FilterOptions

    @Option(help: ArgumentHelp("Print at most N events.", valueName: "N"), transform: Numbers.whole("--limit", 0...Int.max))
    var limit: Int?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    func validate() throws {
        if let to, to < from { throw ValidationError("--to \(to) is before --from \(from); give a range whose end is not before its start.") }
    }

    @Flag(
        name: .customLong("as-stored"),
        help: "Print events as stored: the type and data they were recorded with, not upcast to their newest shape.")
    var asStored = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openReadOnly(asStored: asStored)
            defer { store.close() }
            var remaining = limit ?? .max
            if remaining == 0 { return }
            // A page at a time, through the head as it is now: a large log never sits in memory.
            for try await event in store.events(from: from, through: to ?? .max, filter: filters.filter(), pageSize: 1000) {
                Console.printEvent(event, json: json)
                remaining -= 1
                if remaining == 0 { break }
            }
        }
    }
}
