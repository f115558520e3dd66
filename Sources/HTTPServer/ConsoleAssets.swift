import EventStore

/// The console's files as the server sends them: the bytes SwiftPM embeds from
/// Sources/HTTPServer/Console, each with its content type. The served modules' views come on
/// top (``ConsoleView``, ``Server/addConsoleRoutes(to:)``).
enum ConsoleAssets {
    /// One file: what `GET /console/NAME` answers.
    struct File: Sendable {
        let bytes: [UInt8]
        let contentType: String
    }

    /// The page itself, served at `/` and `/index.html`.
    static let page = File(bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8")
    /// The icon, served at `/favicon.ico` (where browsers look) and `/console/favicon.svg`.
    static let icon = File(bytes: PackageResources.favicon_svg, contentType: "image/svg+xml")

    /// Every file under `/console/`, by name.
    static let files: [String: File] = [
        "index.html": page,
        "favicon.svg": icon,
        "console.css": File(bytes: PackageResources.console_css, contentType: "text/css; charset=utf-8"),
        "main.js": script(PackageResources.main_js),
        "api.js": script(PackageResources.api_js),
        "tail.js": script(PackageResources.tail_js),
        "charts.js": script(PackageResources.charts_js),
        "projections.js": script(PackageResources.projections_js),
        "tables.js": script(PackageResources.tables_js),
        "commands.js": script(PackageResources.commands_js),
    ]

    static func script(_ bytes: [UInt8]) -> File {
        File(bytes: bytes, contentType: "text/javascript; charset=utf-8")
    }
}

extension ConsoleAssets {
    /// `/console/views.json`: the served modules' views, in the menu's order, as
    /// `{"views":[{"name","title","script","stylesheet"}]}` (`stylesheet` null when a view has none).
    static func viewList(_ views: [ConsoleView]) -> File {
        let list: [JSONValue] = views.map { view in
            [
                "name": .string(view.name), "title": .string(view.title),
                "script": .string("/console/views/\(view.name).js"),
                "stylesheet": view.stylesheet == nil ? .null : .string("/console/views/\(view.name).css"),
            ]
        }
        let json: JSONValue = ["views": .array(list)]
        return File(bytes: Array(json.serialized.utf8), contentType: "application/json")
    }

    /// The files of the served modules' views, by name (`NAME.js`, `NAME.css`).
    static func viewFiles(_ views: [ConsoleView]) -> [String: File] {
        var files: [String: File] = [:]
        for view in views {
            files["\(view.name).js"] = script(view.script)
            if let stylesheet = view.stylesheet {
                files["\(view.name).css"] = File(bytes: stylesheet, contentType: "text/css; charset=utf-8")
            }
        }
        return files
    }
}
