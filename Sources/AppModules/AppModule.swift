import Commands
import EventStoreCore
import Projections

/// What an app brings to a backend, in one value: its read models, the upcasters and schema
/// versions of its evolved events, the snapshot checks of its deciders, and its commands with the
/// input each takes. A face (esctl, the HTTP server, a program of a user's own) registers the
/// modules it is given and nothing else: no layer below the apps names one.
///
/// Every requirement but ``name`` has a default of nothing, so a module states only what it has.
public protocol AppModule: Sendable {
    /// The app's name: what `--apps` lists, and the `{app}` of its commands' routes
    /// (`POST /apps/{app}/{command}`) unless a command names another. Lowercase letters, digits
    /// and dashes (``AppSet/validate(_:what:)`` checks).
    var name: String { get }
    /// One line on what the app does, for listings and the console.
    var summary: String { get }
    /// The app's read models.
    var projections: [any Projection] { get }
    /// The upcasters that bring the app's older events to their newest shape; a store the app
    /// uses is opened with them.
    var upcasters: [Upcaster] { get }
    /// The schema version of every event type of the app that evolved past 1, as it writes and
    /// reads them: a store the app runs on must bring older events to it.
    var schemaVersions: [String: UInt16] { get }
    /// The names of the deciders whose stored snapshots ``checkSnapshot(_:in:)`` checks.
    var snapshotDeciders: Set<String> { get }
    /// Checks a stored snapshot of one of ``snapshotDeciders`` against its decider: the problem
    /// in one sentence, or nil. Throws the store's errors.
    func checkSnapshot(_ snapshot: Snapshots.Entry, in store: any EventLog) async throws -> String?
    /// The app's part of the server's OpenAPI document, as YAML: top-level keys `paths`,
    /// `schemas`, `responses` or `parameters` only (no comment or `---` at the top), each
    /// section's entries indented exactly two spaces, with spaces (no tab) and line feeds (no
    /// carriage return); composed into the document's `paths` and `components` (its refs name
    /// `#/components/...` as usual). The server refuses, when it is made, a part out of this
    /// shape, and one naming a path, a component or an operationId the document has already.
    /// Nil (the default): the server writes the paths of ``commands(_:)`` from their declared
    /// fields.
    var openAPI: String? { get }
    /// The app's commands, bound to `context` (the store and clock they run on). Called once
    /// when a face starts; throws when the app cannot run on that store (an `EventStoreError`
    /// for a store opened without its upcasters).
    func commands(_ context: AppContext) throws -> [AppCommand]
}

extension AppModule {
    public var summary: String { "" }
    public var projections: [any Projection] { [] }
    public var upcasters: [Upcaster] { [] }
    public var schemaVersions: [String: UInt16] { [:] }
    public var snapshotDeciders: Set<String> { [] }
    public var openAPI: String? { nil }
    public func checkSnapshot(_ snapshot: Snapshots.Entry, in store: any EventLog) async throws -> String? { nil }
    public func commands(_ context: AppContext) throws -> [AppCommand] { [] }
}

/// What an app's commands run on: the store, the clock that paces them, and the command handler
/// every command should go through (load, decide, append with the versions read, retry).
public struct AppContext: Sendable {
    /// The store the events go to.
    public let store: any EventLog
    /// The clock commands wait on (a countdown's pauses); a test clock in tests.
    public let clock: any Clock<Duration>
    /// The handler over ``store``.
    public let handler: CommandHandler

    /// A context over `store`, with a command handler of `configuration`.
    public init(
        store: any EventLog, clock: any Clock<Duration> = ContinuousClock(),
        configuration: CommandHandler.Configuration = CommandHandler.Configuration()
    ) {
        self.store = store
        self.clock = clock
        handler = CommandHandler(store: store, configuration: configuration)
    }
}
