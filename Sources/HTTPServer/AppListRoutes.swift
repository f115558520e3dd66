import AppModules
import EventStore
import Hummingbird
import WireFormat

extension Server {
    /// `GET /apps`: the app modules served and their commands, each with its route and declared
    /// fields, as `{"apps":[{"name","summary","commands":[{"name","path","summary","fields":[{"name",
    /// "type","required","summary"}]}]}]}`. The console builds its command forms from it; a
    /// client may too.
    func addAppListRoutes(to router: Router<ServerContext>) {
        let listing = AppListing.json(apps: apps, commands: commands)
        router.get("/apps") { request, _ -> Response in
            _ = try RequestQuery(request, known: [])
            return ErrorResponses.body(.ok, listing)
        }
    }
}

/// The JSON of `GET /apps`, made once when the server is.
enum AppListing {
    static func json(apps: AppSet, commands: [RoutedCommand]) -> String {
        let modules: [JSONValue] = apps.modules.map { module in
            let own = commands.filter { $0.module == module.name }
            return [
                "name": .string(module.name),
                "summary": .string(module.summary),
                "commands": .array(own.map(command)),
            ]
        }
        return JSONValue.object([("apps", .array(modules))]).serialized
    }

    static func command(_ routed: RoutedCommand) -> JSONValue {
        [
            "name": .string(routed.command.name),
            "path": .string(routed.path),
            "summary": .string(routed.command.summary),
            "fields": .array(routed.command.fields.map { field in
                [
                    "name": .string(field.name), "type": .string(field.kind.rawValue),
                    "required": .bool(field.required), "summary": .string(field.summary),
                ]
            }),
        ]
    }
}
