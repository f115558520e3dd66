import ArgumentParser
import EventStore
import Projections
import WireFormat

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print counts and sizes of the store.",
        discussion: """
            With --json one object with eventCount, streamCount, firstPosition, headPosition, \
            fileSize, mapSize, pageSize and path. In an empty store firstPosition and headPosition \
            are 0; otherwise positions count from 1.
            """)

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print the statistics as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let store = try await self.store.openReadOnly()
            return try await store.closingAfter {
                let stats = try await store.statistics()
                if json {
                    Console.printJSON(StatisticsJSON.object(stats, location: store.location))
                } else {
                    var rows: [(String, String)] = [
                        ("store", store.location),
                        ("events", String(stats.eventCount)),
                        ("streams", String(stats.streamCount)),
                        ("first position", String(stats.firstPosition)),
                        ("head position", String(stats.headPosition)),
                    ]
                    // A PostgreSQL database has a size on disk and a block size, but no map.
                    if self.store.isPostgres {
                        rows += [("database size", "\(stats.fileSize) bytes"), ("block size", "\(stats.pageSize) bytes")]
                    } else {
                        rows += [
                            ("file size", "\(stats.fileSize) bytes"), ("map size", "\(stats.mapSize) bytes"),
                            ("page size", "\(stats.pageSize) bytes"),
                        ]
                    }
                    for (name, value) in rows {
                        Console.print(name.padded(to: 16) + value)
                    }
                }
            }
        }
    }
}
