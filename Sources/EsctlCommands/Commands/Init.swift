import ArgumentParser
import EventStore

struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create an empty store at --db (for scripts that read before their first write).",
        discussion: """
            Creates the directory (mode 0700) and an empty store in it, and says so. When a store \
            is there already, it says so and exits 0, changing nothing. The commands that read \
            (read, replay, subscribe, stats, export, verify, backup, projections, query, rebuild) \
            never create a store; the commands that write (append, import, the apps' commands) \
            create one when there is none, as init does.
            """)

    @OptionGroup var store: WritingStoreOptions

    func run() async throws {
        try await reportingErrors {
            do {
                let existing = try await self.store.location.openReadOnly()
                await existing.close()
                Console.print("a store is already at \(self.store.path); nothing changed")
                return
            } catch let error as CLIError where error.status == .notFound {}
            let created = try await self.store.open()
            await created.close()
            Console.print("created an empty store at \(self.store.path)")
        }
    }
}
