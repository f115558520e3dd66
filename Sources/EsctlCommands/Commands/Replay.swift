import ArgumentParser
import EventStore
import WireFormat

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
            --as-stored shows them as recorded; tags appear as "tags" when the event has any.

            --tag T (repeatable: all must match, with --type as the types) or --query \
            [{"types":[...],"tags":[...]},...] (any item may match; at most 32 items; one item \
            may be given alone, and {} matches every event) print the events a query matches, \
            through the tag and type indexes instead of the whole log.
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("The first position to print.", valueName: "P"), transform: Numbers.unsigned("--from"))
    var from: UInt64 = 1

    @Option(help: ArgumentHelp("The last position to print (default: the head).", valueName: "P"), transform: Numbers.unsigned("--to"))
    var to: UInt64?

    @OptionGroup var filters: FilterOptions

    @Option(help: ArgumentHelp("Print at most N events.", valueName: "N"), transform: Numbers.whole("--limit", 0...Int.max))
    var limit: Int?

    @Option(
        name: .customLong("tag"), help: ArgumentHelp("Print only events that carry TAG (repeatable: all of them).", valueName: "TAG"))
    var tags: [String] = []

    @Option(
        help: ArgumentHelp(
            "Print only the events a query matches: [{\"types\":[...],\"tags\":[...]},...] or @FILE.", valueName: "JSON|@FILE"))
    var query: String?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    func validate() throws {
        if let to, to < from { throw ValidationError("--to \(to) is before --from \(from); give a range whose end is not before its start.") }
        if query != nil && !(tags.isEmpty && filters.types.isEmpty) {
            throw ValidationError("--query holds the types and tags itself; give --type and --tag inside it, not beside it.")
        }
        if (query != nil || !tags.isEmpty) && (filters.category != nil || filters.prefix != nil) {
            throw ValidationError("--tag and --query select by types and tags only; they do not combine with --category or --prefix.")
        }
        if query == "-" { throw ValidationError("--query takes JSON text or @FILE, not standard input.") }
    }

    /// The query --tag (with --type) or --query give; nil for neither.
    private func eventQuery() throws -> EventQuery? {
        if let query { return try QueryJSON.query([UInt8](InputText.bytes(query, what: "--query"))) }
        guard !tags.isEmpty else { return nil }
        let query = EventQuery(types: filters.types, tags: tags)
        try query.validate()
        return query
    }

    @Flag(
        name: .customLong("as-stored"),
        help: "Print events as stored: the type and data they were recorded with, not upcast to their newest shape.")
    var asStored = false

    func run() async throws {
        try await reportingErrors {
            // The query is checked before the store opens: bad input is 64 whatever the store.
            let query = try eventQuery()
            let store = try await self.store.openReadOnly(asStored: asStored)
            return try await store.closingAfter {
                var remaining = limit ?? .max
                if remaining == 0 { return }
                if let query {
                    // A page of matches at a time, each after the last one printed.
                    var after = from > 0 ? from - 1 : 0
                    while remaining > 0 {
                        let want = min(remaining, 1000)
                        let page = try await store.read(query, after: after, limit: want).events
                        for event in page {
                            if let to, event.position > to { return }
                            Console.printEvent(event, json: json)
                            remaining -= 1
                        }
                        guard page.count == want, let last = page.last else { return }
                        after = last.position
                    }
                    return
                }
                // A page at a time, through the head as it is now: a large log never sits in memory.
                for try await event in store.events(from: from, through: to ?? .max, filter: filters.filter(), pageSize: 1000) {
                    Console.printEvent(event, json: json)
                    remaining -= 1
                    if remaining == 0 { break }
                }
            }
        }
    }
}
