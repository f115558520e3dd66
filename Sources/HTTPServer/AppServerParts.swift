import AppModules
import Hummingbird

/// What an app module brings to the server beyond its commands (which every module's get at
/// `POST /apps/{app}/{command}`): routes of its own (a protocol its original clients speak) and
/// views for the console. A module of the `AppModules` library links no HTTP stack, so these
/// live beside it, in a target that depends on this one.
///
/// ``Server`` serves a part only when the module it names is served (`--apps` chooses): with
/// `--apps none`, none of its routes or views exist.
public protocol AppServerParts: Sendable {
    /// The name of the module these parts belong to (`AppModule.name`).
    var app: String { get }

    /// Its views in the console, in the order the console's menu shows them.
    var consoleViews: [ConsoleView] { get }

    /// GET routes of ``addRoutes(to:on:)`` whose GET does more than read (it opens a stream, or
    /// records something): `HEAD` is not answered on them (405).
    var liveRoutes: Set<String> { get }

    /// POST routes of ``addRoutes(to:on:)`` whose original clients label their JSON bodies as
    /// form-encoded (`application/x-www-form-urlencoded`, URLSession's default): the server
    /// accepts that label there. Every other route refuses it (415), so a web page's form
    /// cannot post to it.
    var formLabelledJSONRoutes: Set<String> { get }

    /// The OpenAPI part of ``addRoutes(to:on:)``'s routes, in the shape `AppModule.openAPI`
    /// takes (top-level `paths:` and, if needed, `schemas:`, `responses:`, `parameters:`, each
    /// entry indented two spaces), composed into `GET /openapi.yaml` when the part is served.
    var openAPI: String? { get }

    /// Adds the module's own routes to `router`. `server` gives the store, the clock and
    /// ``Server/liveResponse(to:contentType:start:)`` for a route that streams. Errors thrown by
    /// a handler are answered as every route's are (a ``ServerError`` with its status). Its
    /// routes may not be the server's own, another part's, or under `/apps` or `/console`
    /// (which are open without the token): ``Server`` refuses such parts when it is made.
    func addRoutes(to router: Router<ServerContext>, on server: Server)
}

extension AppServerParts {
    public var consoleViews: [ConsoleView] { [] }
    public var liveRoutes: Set<String> { [] }
    public var formLabelledJSONRoutes: Set<String> { [] }
    public var openAPI: String? { nil }
    public func addRoutes(to router: Router<ServerContext>, on server: Server) {}
}

/// One view of the console that a module brings: a JavaScript module the console loads, with
/// an optional stylesheet, listed in the menu under its title.
///
/// The script is an ES module served at `/console/views/NAME.js`. It exports `view`, an object
/// with `title` (the menu's text), `html` (the view's markup, put into its section) and
/// `create()`, which returns an object with `streams` (the streams whose new events concern the
/// view) and `refresh(position)` (reads what the view shows, at least as recent as `position`).
/// It may import the console's helpers from `/console/api.js`. The page's content security
/// policy lets it run scripts and styles from the server only: no inline script or style.
public struct ConsoleView: Sendable {
    /// The view's name: its `#NAME` in the page's address and its files' names. Letters,
    /// digits, `-` and `_`, starting with a letter, at most 40 bytes.
    public let name: String
    /// The menu's text.
    public let title: String
    /// The ES module's bytes.
    public let script: [UInt8]
    /// A stylesheet's bytes, served at `/console/views/NAME.css`; nil: none.
    public let stylesheet: [UInt8]?

    public init(name: String, title: String, script: [UInt8], stylesheet: [UInt8]? = nil) {
        self.name = name
        self.title = title
        self.script = script
        self.stylesheet = stylesheet
    }

}

extension ConsoleView {
    /// The console's own views, whose names a module's view may not take.
    static let genericNames: Set<String> = ["log", "projections", "commands"]

    /// `views` as given, once each name was checked: throws ``ServerError`` with
    /// ``ServerError/Code/invalidConfiguration`` for a name that is not one, is the console's
    /// own, or is taken twice.
    static func checked(_ views: [ConsoleView]) throws(ServerError) -> [ConsoleView] {
        var names = genericNames
        for view in views {
            guard AppSet.isPlainName(view.name, maxBytes: 40) else {
                throw ServerError(
                    .invalidConfiguration,
                    "The console view '\(view.name.prefix(80))' has no usable name: use letters, digits, '-' and '_', starting with a letter, at most 40 bytes.")
            }
            guard names.insert(view.name).inserted else {
                throw ServerError(.invalidConfiguration, "Two console views are named '\(view.name)' (or it is one of the console's own); give each its own name.")
            }
        }
        return views
    }
}
