import ArgumentParser
import EventStore
import WireFormat

/// `esctl tracking NAME`: where a processor stands (the last position it recorded as handled).
struct TrackingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tracking",
        abstract: "Print the last position a processor recorded as handled.",
        discussion: """
            A processor records its position with `esctl append --batch FILE --track NAME:POSITION` \
            (or the library's append with a tracking position). Prints the position, 0 when NAME \
            has recorded none; with --json one object {"name":NAME,"position":P}.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The processor's name.")
    var name: String

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openReadOnly()
            return try await store.closingAfter {
                let position = try await store.trackingPosition(of: name)
                if json {
                    var object = JSONObjectWriter()
                    object.add("name", name)
                    object.add("position", position)
                    Console.printJSON(object.finish())
                } else {
                    Console.print(String(position))
                }
            }
        }
    }
}
