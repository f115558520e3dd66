import Foundation
import AppModules
import EventStore
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import Projections
import ServiceLifecycle

/// The store, its read models and the apps over HTTP/1.1: the JSON API, live streams, the apps'
/// commands and their own routes, a web console. `esctl serve` runs one; a program may embed one
/// on its own store.
///
/// The server does not own the store: whoever opened it closes it after ``run(alongside:onListening:)``
/// returns.
public final class Server: Sendable {
    /// The store every route reads and writes.
    public let store: any EventLog
    /// The registered read models, caught up and queried by the projection routes.
    public let runner: ProjectionRunner
    /// The app modules served: their commands at `POST /apps/{app}/{command}`.
    public let apps: AppSet
    /// Their commands, bound to the store, by route.
    let commands: [RoutedCommand]
    /// The OpenAPI document of this server's routes (``OpenAPIDocument``).
    let openAPI: String
    /// The served modules' own routes and console views (``AppServerParts``).
    let parts: [any AppServerParts]
    /// The console's views that the served modules bring, in the menu's order.
    let consoleViews: [ConsoleView]
    /// GET routes that are not answered for HEAD: `/subscribe` and the parts' live routes.
    let liveRoutes: RoutePatterns
    /// POST routes that take a form-encoded label on JSON (the parts' ``AppServerParts/formLabelledJSONRoutes``).
    let formLabelledJSONRoutes: RoutePatterns
    /// How the server listens and what it allows.
    public let options: ServerOptions
    /// The clock of heartbeats and of the apps' commands (a test clock in tests).
    public let clock: any Clock<Duration>
    /// Where access lines and the server's notes go.
    public let logger: Logger
    /// What `GET /metrics` prints; open the store with its ``ServerMetrics/factory``.
    public let metrics: ServerMetrics
    let session = SessionKey()
    /// Counts wrong tokens per client address (the token check and `POST /session`).
    let tokenThrottle = TokenThrottle()
    /// The live streams open now (`/subscribe`, the apps' live routes).
    public let openStreams = OpenStreams()
    /// The connections open now, against the cap.
    let connections: ConnectionGauge
    /// HTTPS, when the options give a certificate and key.
    let tls: TLSConfiguration?
    /// The cap on live streams (counted by ``openStreams``).
    let streamCap: ClientCap
    /// The cap on queries waiting for `minPosition`.
    let waitCap: ClientCap
    /// Set when a graceful stop begins (``run(alongside:onListening:)``).
    let stopSignal = StopSignal()
    /// The routes ``router()`` registered, by path and method.
    let routeTable = RouteTable()

    /// A server over `store` with `runner`'s projections and the commands of `apps`, and the
    /// routes and console views of those `parts` whose module is in `apps` (the others are left
    /// out: a program passes every part it carries, whichever modules `--apps` chose); `metrics`
    /// is what `/metrics` prints (the store's metrics appear there when it was opened with
    /// `metrics.factory`). Throws ``ServerError`` with ``ServerError/Code/invalidConfiguration``
    /// when `options` do not hold (see ``ServerOptions/validate()``), when `store` was opened
    /// without the upcasters of an app in `apps` (`AppModule.upcasters`), when the apps'
    /// names or routes clash, when a served part's routes clash with the server's or another
    /// part's or say what they are not (see ``AppServerParts``), or when a console view's name is
    /// not one or is taken. Raises the process's soft limit on open files to its hard limit, and
    /// sizes the connection cap from it unless ``ServerOptions/maxConnections`` is set.
    public init(
        store: any EventLog, runner: ProjectionRunner, apps: [any AppModule] = [], parts: [any AppServerParts] = [], options: ServerOptions = ServerOptions(),
        clock: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "esctl.serve"),
        metrics: ServerMetrics = ServerMetrics()
    ) throws(ServerError) {
        try options.validate()
        self.store = store
        self.runner = runner
        self.options = options
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        let descriptors = DescriptorLimit.raiseToHard()
        let limit = options.maxConnections ?? ServerOptions.defaultMaxConnections(descriptorLimit: descriptors)
        // Past the descriptors, the process cannot even read its own status files and dies:
        // a cap it cannot hold is refused, not discovered under load.
        let needed = limit + ConnectionGauge.refusalReserve + ServerOptions.descriptorReserve
        if options.maxConnections != nil && needed > descriptors {
            throw ServerError(
                .invalidConfiguration,
                "--max-connections \(limit) needs about \(needed) open files and this process may open \(descriptors) (ulimit -n); give at most \(max(1, descriptors - ConnectionGauge.refusalReserve - ServerOptions.descriptorReserve)), or raise the limit.")
        }
        tls = try ServerTLS.configuration(options)
        connections = ConnectionGauge(limit: limit, logger: logger)
        streamCap = ClientCap(limit: options.maxSubscribers, what: "live streams", option: "--max-subscribers", logger: logger)
        waitCap = ClientCap(limit: options.maxWaits, what: "waiting queries", option: "--max-waits", logger: logger)
        do {
            let apps = try AppSet(apps)
            try apps.checkUpcasters(of: store)
            let context = AppContext(store: store, clock: clock)
            commands = try apps.commands(context)
            let served = parts.filter { part in apps.modules.contains { $0.name == part.app } }
            openAPI = try OpenAPIDocument.compose(apps: apps, commands: commands, parts: served)
            consoleViews = try ConsoleView.checked(served.flatMap(\.consoleViews))
            self.parts = served
            liveRoutes = RoutePatterns(served.reduce(["/subscribe"]) { $0.union($1.liveRoutes) })
            formLabelledJSONRoutes = RoutePatterns(served.reduce([]) { $0.union($1.formLabelledJSONRoutes) })
            self.apps = apps
        } catch let error as ServerError {
            throw error
        } catch let error as any CodedError {
            throw ServerError(.invalidConfiguration, error.message)
        } catch {
            throw ServerError(.invalidConfiguration, "The apps cannot be served: \(error).")
        }
        try checkPartRoutes()
    }

    /// Every route, behind the access log, the error shaping and the token check.
    public func router() -> Router<ServerContext> {
        let router = Router(context: ServerContext.self)
        router.add(middleware: AccessLogMiddleware(logger: logger, metrics: metrics, maxBodyBytes: options.maxBodyBytes))
        router.add(middleware: StoppingMiddleware(signal: stopSignal))
        router.add(middleware: BrowserGuardMiddleware(options: options, formLabelledJSONRoutes: formLabelledJSONRoutes))
        router.add(middleware: AuthorizationMiddleware(token: options.token, session: session, throttle: tokenThrottle))
        router.add(middleware: MethodNotAllowedMiddleware(table: routeTable, liveRoutes: liveRoutes))
        addOwnRoutes(to: router)
        for part in parts { part.addRoutes(to: router, on: self) }
        routeTable.fill(from: router)
        return router
    }

    /// The server's own routes: everything but the parts' (``AppServerParts``).
    func addOwnRoutes(to router: Router<ServerContext>) {
        addHealthRoutes(to: router)
        addSessionRoutes(to: router)
        addLogRoutes(to: router)
        addAppendStreamRoute(to: router)
        addStreamMaintenanceRoutes(to: router)
        addProjectionRoutes(to: router)
        addSubscribeRoutes(to: router)
        addProjectionTableRoutes(to: router)
        addAppRoutes(to: router)
        addAppListRoutes(to: router)
        addMetricsRoutes(to: router)
        addOpenAPIRoutes(to: router)
        addConsoleRoutes(to: router)
    }

    /// The application ``run(alongside:onListening:)`` runs; tests drive it through HummingbirdTesting.
    /// Throws ``ServerError`` with ``ServerError/Code/invalidConfiguration`` when the TLS
    /// configuration (checked when the server was made) cannot make a TLS channel after all.
    public func application(
        onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
    ) throws -> some ApplicationProtocol {
        let host = options.host
        let gauge = connections
        let bodyTimeout = options.bodyTimeout
        let stallTimeout = options.stallTimeout
        let stopSignal = stopSignal
        let logger = logger
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                ConnectionGuardHandler(
                    gauge: gauge, bodyTimeout: bodyTimeout, stallTimeout: stallTimeout, stopSignal: stopSignal,
                    streamingRoutes: Self.streamingBodyRoutes, logger: logger)
            ],
            idleTimeout: TimeAmount(options.idleTimeout))
        var server = HTTPServerBuilder.http1(configuration: http)
        if let tls {
            do {
                server = try .tls(server, tlsConfiguration: tls)
            } catch {
                throw ServerError(.invalidConfiguration, "TLS cannot be served with the certificate and key given: \(error).")
            }
        }
        return Application(
            router: HeadAwareRouter(router: router(), table: routeTable, liveRoutes: liveRoutes),
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: options.port), serverName: "esctl",
                availableConnectionsDelegate: ConnectionAcceptance(gauge: gauge)),
            onServerRunning: { channel in await onListening(host, channel.localAddress?.port ?? 0) },
            logger: Self.frameworkLogger(logger))
    }

    /// The connection cap in force: ``ServerOptions/maxConnections``, or its default for the
    /// process's descriptor limit.
    public var maxConnections: Int { connections.limit }

    /// The connections open now (those being refused past the cap included).
    public var openConnections: Int { connections.open }

    /// The logger Hummingbird itself gets: the server's, from notice up. Its info lines ("Server
    /// started and listening on ...") repeat what `onListening` says (esctl's own `serving` line)
    /// and the access log; its warnings and errors still go out.
    static func frameworkLogger(_ logger: Logger) -> Logger {
        var quieter = logger
        quieter.logLevel = max(logger.logLevel, .notice)
        return quieter
    }

    /// A failure to bind, in one sentence: ``ServerError/Code/unavailable`` for a port in use or
    /// not allowed; nil for any other error.
    static func bindFailure(_ error: any Error, port: Int) -> ServerError? {
        guard let error = error as? IOError else { return nil }
        switch error.errnoCode {
        case EADDRINUSE:
            return ServerError(.unavailable, "port \(port) is in use; stop what listens there, or give another --port (0 takes a free one).")
        case EACCES:
            return ServerError(.unavailable, "port \(port) may not be used by this user (ports below 1024 need privileges); give another --port.")
        case EADDRNOTAVAIL:
            return ServerError(.unavailable, "the address to listen on is not one of this machine's; give another --host.")
        default:
            return nil
        }
    }

    /// Serves until SIGTERM or SIGINT, then stops gracefully: stops accepting, ends open streams,
    /// lets requests in flight finish, and returns within ``ServerOptions/shutdownGrace`` (open
    /// connections are cut after it). Meanwhile the runner's projections follow every commit
    /// (`ProjectionRunner.followLive(processors:)`, a child task stopped after the HTTP
    /// server), so their lag is what the console and `/metrics` show and a query rarely waits. `onListening` gets the bound host and port.
    /// `others` run in the same group (the gRPC face of `esctl serve --grpc-port`): they start
    /// with the server and stop with it, on the same signals.
    /// Throws ``ServerError`` with ``ServerError/Code/unavailable`` when it cannot bind (a port in
    /// use), and what the server failed with otherwise.
    public func run(
        alongside others: [any Service] = [], onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
    ) async throws {
        var configuration = ServiceGroupConfiguration(
            // The group stops its services last to first: the stop is noted before the HTTP
            // server begins to drain, so waits answer 503 at once and late requests too. The
            // services beside (another face, say) start first and stop last.
            services: others.map { .init(service: $0) }
                + [.init(service: try application(onListening: onListening)), .init(service: StopWatcher(signal: stopSignal))],
            gracefulShutdownSignals: [.sigterm, .sigint],
            cancellationSignals: [],
            logger: logger)
        // Past the grace, the group cancels what still runs (streams that did not end, slow
        // clients), so a stop never hangs.
        configuration.maximumGracefulShutdownDuration = options.shutdownGrace
        configuration.maximumCancellationDuration = .seconds(1)
        // The daemon is a child task beside the group, not a service in it: the group ends what
        // still runs a second after it cancels it with a crash, and a fold does not stop mid-batch.
        // It is cancelled once the group has stopped (or failed), and awaited before `run` returns.
        try await withThrowingTaskGroup(of: Void.self) { children in
            children.addTask { [runner] in await runner.followLive() }
            do {
                try await ServiceGroup(configuration: configuration).run()
            } catch {
                children.cancelAll()
                throw Self.bindFailure(error, port: options.port) ?? error
            }
            children.cancelAll()
        }
    }
}
