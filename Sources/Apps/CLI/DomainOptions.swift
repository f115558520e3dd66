import ArgumentParser
import EsctlCommands
import Commands
import EventStore
import Foundation
import Projections
import AppModules
import Apps
import WireFormat

/// What every domain command shares: the store, and `--json` to print what was recorded.
struct DomainOptions: ParsableArguments {
    @OptionGroup var store: WritingStoreOptions

    @Flag(help: "Print the events recorded, one JSON object per line (as replay --json).")
    var json = false

    /// Opens the store and a backend of `app` over it (system clock), runs `body`, closes the
    /// store. Throws ``AppSelectionError`` (exit 64) when `--apps` leaves `app` out.
    func withBackend(of app: any AppModule, _ body: (AppBackend) async throws -> Void) async throws {
        try await store.withBackend(of: app, body)
    }

    /// Warns on standard error of each event of the command's streams that was passed over (it
    /// does not decode): the command decided by its rules on the rest.
    func warn(_ passedOver: [PassedOverEvent]) {
        Console.warn(passedOver: passedOver)
    }

    /// Prints recorded events as JSON lines when `--json` was given; returns whether it did.
    func printJSON(_ events: [RecordedEvent]) -> Bool {
        guard json else { return false }
        events.forEach { Console.printJSON(EventJSON.line($0)) }
        return true
    }
}

extension WritingStoreOptions {
    /// Opens the store and a backend of `app` over it (system clock), runs `body`, closes the
    /// store. Throws ``AppSelectionError`` (exit 64) when `--apps` leaves `app` out: the store
    /// is then opened without its upcasters.
    func withBackend(of app: any AppModule, _ body: (AppBackend) async throws -> Void) async throws {
        let apps = try location.selectedApps()
        guard apps.contains(app.name) else {
            throw AppSelectionError("The app '\(app.name)' is not among --apps (\(apps.described)); add it, or leave --apps out.")
        }
        let store = try await open()
        return try await store.closingAfter {
            try await body(try AppBackend(AppContext(store: store), reaching: app.schemaVersions))
        }
    }
}

/// `--user U`, defaulting to "default".
struct UserOption: ParsableArguments {
    @Option(help: ArgumentHelp("The user.", valueName: "U"))
    var user: String = AppStreams.defaultKey
}

/// `--room R`, defaulting to "default".
struct RoomOption: ParsableArguments {
    @Option(help: ArgumentHelp("The chat room.", valueName: "R"))
    var room: String = AppStreams.defaultKey
}

/// `--campground C`, defaulting to "default".
struct CampgroundOption: ParsableArguments {
    @Option(help: ArgumentHelp("The campground.", valueName: "C"))
    var campground: String = AppStreams.defaultKey
}

/// A number of meters on the command line.
func formatMeters(_ value: Double) -> String {
    JSONWriter.number(value) + " m"
}
