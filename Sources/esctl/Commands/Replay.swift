import ArgumentParser
import EventStore

struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the whole log in position order, optionally filtered.",
        discussion: """
            One line per event: POSITION  STREAM@VERSION  TYPE  RECORDED-AT  DATA. With --json, one \
            object per line with the keys position, stream, version, id, type, data (the JSON value \
            itself), metadata (JSON, or null when empty) and recordedAt (ISO 8601, UTC). Data that is \
            not JSON appears as a base64 string with "dataEncoding":"base64".
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

    func run() async throws {
        try await reportingErrors {
            let store = try self.store.openReadOnly()
            defer { store.close() }
            try EventPages.forEach(in: store, from: from, through: to ?? .max, limit: limit ?? .max, filter: filters.filter()) {
                Console.printEvent($0, json: json)
            }
        }
    }
}

/// Walks the log page by page, so a large log never sits in memory at once.
enum EventPages {
    static let pageSize = 1000

    static func forEach(
        in store: EventStore, from start: UInt64, through last: UInt64, limit: Int, filter: EventFilter,
        _ body: (RecordedEvent) throws -> Void
    ) throws {
        var next = start
        var remaining = limit
        while remaining > 0, next <= last {
            let page = try store.read(from: next, through: last, limit: min(remaining, pageSize), filter: filter)
            guard let final = page.last else { return }
            for event in page { try body(event) }
            remaining -= page.count
            next = final.position + 1
        }
    }
}
