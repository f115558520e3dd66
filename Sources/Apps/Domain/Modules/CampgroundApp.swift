import AppModules
import Commands
import EventStoreCore
import Projections

/// The campground's bookings: campers, sites and reservations per campground, their read
/// models, the upcasters of the events that evolved, and the commands (`/apps/camp/...`).
public struct CampgroundApp: AppModule {
    public let name = "campground"
    public let summary = "A campground's campers, sites and reservations."
    public var projections: [any Projection] { [CampersProjection(), CampsitesProjection(), ReservationsProjection()] }
    public var upcasters: [Upcaster] { CampgroundUpcasters.all }
    public var schemaVersions: [String: UInt16] { [CamperAdded.eventType: CamperAdded.schemaVersion] }
    public let snapshotDeciders: Set<String> = ["campground"]

    public var openAPI: String? { String(decoding: PackageResources.campground_yaml, as: UTF8.self) }

    public init() {}

    public func checkSnapshot(_ snapshot: Snapshots.Entry, in store: any EventLog) async throws -> String? {
        guard let stream = snapshot.versions.first?.stream, let name = AppStreams.key(of: stream, prefix: AppStreams.campgroundPrefix) else {
            return AppSet.belongsToNoDecider(snapshot)
        }
        return try await Snapshots.check(snapshot, with: CampgroundDecider(campground: name), in: store)
    }

    public func commands(_ context: AppContext) throws -> [AppCommand] {
        let backend = try AppBackend(context, reaching: schemaVersions)
        let campground = AppField("campground", .string, required: false, "The campground (default \"default\").")
        func camp(_ name: String, _ summary: String, _ fields: [AppField], _ command: @escaping @Sendable (AppInput) throws -> CampgroundCommand) -> AppCommand {
            AppCommand(name, app: "camp", summary: summary, fields: [campground] + fields) { input in
                let command = try command(input)
                let outcome = try await backend.campground(command, campground: try input.string("campground", default: AppStreams.defaultKey))
                return .events(outcome.recorded, passedOver: outcome.passedOver)
            }
        }
        return [
            camp("add-camper", "Adds a camper.", [AppField("name", .string, "The camper's full name."), AppField("phone", .string, "The camper's phone number.")]) {
                input in .addCamper(fullName: try input.string("name"), phoneNumber: try input.string("phone"))
            },
            camp(
                "add-site", "Adds a site.",
                [
                    AppField("number", .integer, "The site's number."), AppField("electricity", .boolean, required: false, "Whether it has electricity (default false)."),
                    AppField("water", .boolean, required: false, "Whether it has water (default false)."),
                ]
            ) { input in
                .addSite(number: try input.int("number"), electricity: try input.bool("electricity", default: false), water: try input.bool("water", default: false))
            },
            camp("delete-site", "Deletes a site.", [AppField("number", .integer, "The site's number.")]) { input in .deleteSite(try input.int("number")) },
            camp(
                "reserve", "Reserves a site for a camper (recorded as Invalid when the nights or an overlap break the rules).",
                [
                    AppField("site", .integer, "The site's number."), AppField("camper", .string, "The camper's id."),
                    AppField("date", .string, "The first night, YYYY-MM-DD."), AppField("nights", .integer, "How many nights."),
                ]
            ) { input in
                let site = try input.int("site")
                let camper = try input.string("camper")
                let date = try input.string("date")
                let nights = try input.int("nights")
                guard let day = CivilDate(date) else {
                    throw input.invalid("date", "The date '\(date.prefix(40))' is not a date; give it as YYYY-MM-DD.")
                }
                return .reserve(site: site, camperId: camper, date: day, nights: nights)
            },
            camp("cancel", "Cancels a reservation.", [AppField("reservation", .string, "The reservation's id.")]) { input in
                .cancel(reservationId: try input.string("reservation"))
            },
        ]
    }
}
