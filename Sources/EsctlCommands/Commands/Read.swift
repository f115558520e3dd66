import ArgumentParser
import EventStore

struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the events of one stream.",
        discussion: "One line per event; with --json one JSON object per line (see `esctl replay --help`).")

    @OptionGroup var store: StoreOptions

    @Argument(help: "The stream to read.")
    var stream: String

    @Option(help: ArgumentHelp("The first version to print (default: 1, or the last with --backwards).", valueName: "V"), transform: Numbers.unsigned("--from"))
    var from: UInt64?

    @Option(help: ArgumentHelp("Print at most N events.", valueName: "N"), transform: Numbers.whole("--limit", 0...Int.max))
    var limit: Int?

    @Flag(help: "Read from newer to older versions.")
    var backwards = false

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @Flag(
        name: .customLong("as-stored"),
        help: "Print events as stored: the type and data they were recorded with, not upcast to their newest shape.")
    var asStored = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openReadOnly(asStored: asStored)
            return try await store.closingAfter {
                let version = try await store.streamVersion(stream)
                guard version > 0 else {
                    throw CLIError(.notFound, "The stream '\(stream)' has no events; check its name (`\(Console.toolName) replay` lists every event).")
                }
                let direction: ReadDirection = backwards ? .backward : .forward
                var remaining = limit ?? .max
                var next: UInt64? = from
                while remaining > 0 {
                    let page = try await store.readStream(stream, from: next, direction: direction, limit: min(remaining, 1000))
                    for event in page { Console.printEvent(event, json: json) }
                    remaining -= page.count
                    guard let last = page.last, page.count == min(remaining + page.count, 1000) else { break }
                    if backwards {
                        guard last.version > 1 else { break }
                        next = last.version - 1
                    } else {
                        next = last.version + 1
                    }
                }
            }
        }
    }
}
