import ArgumentParser
import EsctlCommands
import Commands
import EventStore
import Projections
import Apps

struct Camp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The campground: campers, sites and reservations.",
        discussion: """
            A reservation of 0 nights or fewer, or one overlapping a reserved stay of the same \
            site, is recorded with status Invalid: its id and status are printed, the problem goes \
            to standard error, and the exit code is 1. Unknown sites, campers and reservations exit \
            67 and record nothing; a duplicate site number exits 1.
            """,
        subcommands: [AddCamper.self, AddSite.self, DeleteSite.self, Reserve.self, Cancel.self])

    static func run(
        _ command: CampgroundCommand, _ options: DomainOptions, _ campground: CampgroundOption,
        _ describe: @escaping (AppBackend.CampgroundOutcome) -> String
    ) async throws {
        try await reportingErrors {
            try await options.withBackend(of: CampgroundApp()) { backend in
                do {
                    let outcome = try await backend.campground(command, campground: campground.campground)
                    options.warn(outcome.passedOver)
                    if !options.printJSON(outcome.recorded) { Console.print(describe(outcome)) }
                } catch let error as AppError where error.code == .recordedInvalid {
                    // Recorded, but invalid: say what was recorded, then fail with the problem.
                    if !options.printJSON(error.recordedEvents) {
                        for event in error.recordedEvents {
                            if let recorded = try? ReservationRecorded(recorded: event) { Console.print("\(recorded.reservationId) \(recorded.status.rawValue)") }
                        }
                    }
                    throw error
                }
            }
        }
    }

    struct AddCamper: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a camper; prints the new camper's id.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var campground: CampgroundOption
        @Argument(help: "The camper's full name.") var name: String
        @Argument(help: "The camper's phone number.") var phone: String
        func run() async throws {
            try await Camp.run(.addCamper(fullName: name, phoneNumber: phone), options, campground) { $0.camper?.id ?? "" }
        }
    }

    struct AddSite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a site (a number that may exist once).")
        @OptionGroup var options: DomainOptions
        @OptionGroup var campground: CampgroundOption
        @Argument(help: "The site's number.", transform: Numbers.whole("The site number", Int.min...Int.max)) var number: Int
        @Flag(help: "The site has electricity.") var electricity = false
        @Flag(help: "The site has water.") var water = false
        func run() async throws {
            try await Camp.run(.addSite(number: number, electricity: electricity, water: water), options, campground) { outcome in
                "site \(number) added; the next site number is \(outcome.campground.nextSiteNumber)"
            }
        }
    }

    struct DeleteSite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a site without active reservations.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var campground: CampgroundOption
        @Argument(help: "The site's number.", transform: Numbers.whole("The site number", Int.min...Int.max)) var number: Int
        func run() async throws {
            try await Camp.run(.deleteSite(number), options, campground) { _ in "site \(number) deleted" }
        }
    }

    struct Reserve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Reserve a site for a camper from a date for some nights; prints the id and status.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var campground: CampgroundOption
        @Option(parsing: .unconditional, help: "The site's number.", transform: Numbers.whole("--site", Int.min...Int.max)) var site: Int
        @Option(help: ArgumentHelp("The camper's id.", valueName: "ID")) var camper: String
        @Option(help: ArgumentHelp("The first night, as YYYY-MM-DD.", valueName: "YYYY-MM-DD")) var date: String
        @Option(parsing: .unconditional, help: "The number of nights.", transform: Numbers.whole("--nights", Int.min...Int.max)) var nights: Int

        func run() async throws {
            try await reportingErrors {
                guard let day = CivilDate(date) else {
                    throw CLIError(.invalidInput, "The date '\(date)' is not a date; give it as YYYY-MM-DD.")
                }
                try await Camp.run(.reserve(site: site, camperId: camper, date: day, nights: nights), options, campground) { outcome in
                    guard let reservation = outcome.reservation else { return "" }
                    return "\(reservation.id) \(reservation.status.rawValue)"
                }
            }
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel a reserved stay.")
        @OptionGroup var options: DomainOptions
        @OptionGroup var campground: CampgroundOption
        @Argument(help: "The reservation's id.") var reservation: String
        func run() async throws {
            try await Camp.run(.cancel(reservationId: reservation), options, campground) { outcome in
                "\(reservation) \(outcome.reservation?.status.rawValue ?? "Cancelled")"
            }
        }
    }
}
