/// The console's files as the server sends them: the bytes SwiftPM embeds from
/// Sources/HTTPServer/Console, each with its content type.
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
        "workout.js": script(PackageResources.workout_js),
        "chat.js": script(PackageResources.chat_js),
        "camp.js": script(PackageResources.camp_js),
        "color.js": script(PackageResources.color_js),
    ]

    private static func script(_ bytes: [UInt8]) -> File {
        File(bytes: bytes, contentType: "text/javascript; charset=utf-8")
    }
}
