import Apps
import Hummingbird

extension Server {
    /// The campground (`esctl camp`): `POST /apps/camp/add-camper {"campground"?, "name",
    /// "phone"}`, `add-site {"campground"?, "number", "electricity"?, "water"?}`,
    /// `delete-site {"campground"?, "number"}`, `reserve {"campground"?, "site", "camper",
    /// "date", "nights"}` and `cancel {"campground"?, "reservation"}`, each answering the events
    /// recorded. A reservation recorded as Invalid answers 422 with the problem, `domain`,
    /// `domainCode` and the `recorded` events (see ``AppAnswer/refusal(_:)``).
    func addCampRoutes(to router: Router<ServerContext>) {
        let key: Set<String> = ["campground"]
        addCamp(router, "add-camper", fields: key.union(["name", "phone"])) { body in
            .addCamper(fullName: try body.string("name"), phoneNumber: try body.string("phone"))
        }
        addCamp(router, "add-site", fields: key.union(["number", "electricity", "water"])) { body in
            .addSite(number: try body.int("number"), electricity: try body.bool("electricity", default: false), water: try body.bool("water", default: false))
        }
        addCamp(router, "delete-site", fields: key.union(["number"])) { body in .deleteSite(try body.int("number")) }
        addCamp(router, "reserve", fields: key.union(["site", "camper", "date", "nights"])) { body in
            let site = try body.int("site")
            let camper = try body.string("camper")
            let date = try body.string("date")
            let nights = try body.int("nights")
            guard let day = CivilDate(date) else {
                throw ServerError(.badRequest, "The date '\(date.prefix(40))' is not a date; give it as YYYY-MM-DD.")
            }
            return .reserve(site: site, camperId: camper, date: day, nights: nights)
        }
        addCamp(router, "cancel", fields: key.union(["reservation"])) { body in .cancel(reservationId: try body.string("reservation")) }
    }

    private func addCamp(
        _ router: Router<ServerContext>, _ name: String, fields: Set<String>,
        _ command: @escaping @Sendable (AppRequestBody) throws -> CampgroundCommand
    ) {
        addAppCommand(router, "/apps/camp/\(name)", fields: fields) { body in
            let command = try command(body)
            let outcome = try await self.backend.campground(command, campground: try body.string("campground", default: AppStreams.defaultKey))
            self.warnPassedOver(outcome.passedOver)
            return .events(outcome.recorded)
        }
    }
}
