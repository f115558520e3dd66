import ArgumentParser
import EventStore
import Foundation
import GRPCServer
import HTTPServer
import ServiceLifecycle
import Projections
import Logging

/// `esctl serve`, with the options a program adds (``ServeExtras``).
struct Serve<Extras: ServeExtras>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the store over HTTP: the JSON API, live streams, the apps' commands and routes, a web console.",
        discussion: """
            Listens on 127.0.0.1:8080 unless --host and --port say otherwise (--port 0 takes a free \
            port) and says so on standard error: `esctl: serving STORE on http://HOST:PORT` (https with \
            TLS). It serves \
            an existing store (exit 67 otherwise, unless --create); a port in use exits 69. A store \
            this user may not write (or --read-only) is served for reading: writes answer 503, and \
            queries answer from the projections as another process keeps them caught up. A host \
            that is not loopback needs a token of 16 characters or more (--token, --token-file or \
            $ESCTL_TOKEN), and --tls-cert and --tls-key serve HTTPS (a TLS proxy in front does too); with a token every route \
            but /health and the console's files needs it as `Authorization: Bearer TOKEN` or the \
            cookie POST /session sets. Open the address in a browser for the console: the live \
            log, the projections, the apps' commands and views (it asks for the token when there is one). While it \
            serves a store it may write, every projection follows the commits. Connections are capped \
            (--max-connections; 503 past it) and timed out when idle, live streams and waits too \
            (--max-subscribers, --max-waits), and a client that stops reading is cut after \
            --stall-timeout; requests from other sites' \
            web pages (Origin, Sec-Fetch-Site) get 403 unless --allow-origin names them, and a Host \
            that does not name the server gets 421 unless --allow-host does. One access line per request goes to \
            standard error (--log-level warning silences them). \
            SIGTERM or Ctrl-C stops it gracefully: open streams end, appends in flight finish, the \
            store is closed, and it exits 0. docs/http.md lists the routes; \
            GET /openapi.yaml serves their OpenAPI document. --grpc-port also serves the store over \
            gRPC as UmaDB's DCB service (umadb.v1.DCB, with grpc.health.v1), which UmaDB's clients \
            speak; --port 0 beside it serves gRPC alone (docs/grpc.md).
            """)
    }

    @OptionGroup var store: WritingStoreOptions

    @Option(help: ArgumentHelp("The address to listen on.", valueName: "H"))
    var host: String = "127.0.0.1"

    @Option(
        help: ArgumentHelp("The port to listen on; 0 takes a free one (with --grpc-port: 0 serves no HTTP at all).", valueName: "P"),
        transform: Numbers.whole("--port", 0...65535))
    var port: Int = 8080

    @Option(
        name: .customLong("grpc-port"),
        help: ArgumentHelp(
            "Also serve gRPC on this port: UmaDB's DCB protocol (umadb.v1.DCB) and gRPC health; 0 takes a free one. --token is the API key its clients send; --tls-cert and --tls-key serve it over TLS.",
            valueName: "P"),
        transform: Numbers.whole("--grpc-port", 0...65535))
    var grpcPort: Int?

    @Option(
        name: .customLong("grpc-host"),
        help: ArgumentHelp("The address gRPC listens on (the loopback rule of --host holds: another address needs a token).", valueName: "H"))
    var grpcHost: String = "127.0.0.1"

    @Option(
        help: ArgumentHelp(
            "The token every route but /health needs, at least 16 characters. Default: $ESCTL_TOKEN, else none (loopback only). --token-file keeps it out of `ps`.",
            valueName: "T"))
    var token: String?

    @Option(
        name: .customLong("token-file"),
        help: ArgumentHelp("A file whose first line is the token (kept out of `ps` and the shell's history).", valueName: "FILE"))
    var tokenFile: String?

    @Flag(help: "Make an empty store at --db when there is none (without it, a path with no store is refused).")
    var create = false

    @Flag(
        name: .customLong("read-only"),
        help: "Serve the store for reading only (as a store this user may not write is served): writes answer 503, queries answer from the projections that are caught up (by another process that writes the store).")
    var readOnly = false

    @Option(
        name: .customLong("max-connections"),
        help: ArgumentHelp(
            "The most connections served at once; past it, new ones get 503 with Retry-After. Default: from the descriptor limit, at most 1024.",
            valueName: "N"),
        transform: Numbers.whole("--max-connections", 1...1_000_000))
    var maxConnections: Int?

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp("Seconds a connection may wait for a request's head or a body's next part.", valueName: "S"),
        transform: Numbers.whole("--idle-timeout", 1...86_400))
    var idleTimeout: Int = 30

    @Option(
        name: .customLong("body-timeout"),
        help: ArgumentHelp("Seconds a request's whole body may take after its head (for POST /append/stream, each part after the one before or the last answer).", valueName: "S"),
        transform: Numbers.whole("--body-timeout", 1...86_400))
    var bodyTimeout: Int = 30

    @Option(
        name: .customLong("stall-timeout"),
        help: ArgumentHelp(
            "Seconds a client may leave what is written to it untaken (it stopped reading a stream) before its connection is closed.",
            valueName: "S"),
        transform: Numbers.whole("--stall-timeout", 1...86_400))
    var stallTimeout: Int = 30

    @Option(
        name: .customLong("max-subscribers"),
        help: ArgumentHelp("The most live streams (/subscribe and the apps' live routes) open at once; past it, 503 with Retry-After.", valueName: "N"),
        transform: Numbers.whole("--max-subscribers", 1...1_000_000))
    var maxSubscribers: Int = 256

    @Option(
        name: .customLong("max-waits"),
        help: ArgumentHelp("The most queries waiting for minPosition at once; past it, 503 with Retry-After.", valueName: "N"),
        transform: Numbers.whole("--max-waits", 1...1_000_000))
    var maxWaits: Int = 512

    @Option(
        name: .customLong("subscriber-buffer"),
        help: ArgumentHelp(
            "The most bytes of events one live stream holds ahead of its client (one event when a single one is larger).",
            valueName: "BYTES"),
        transform: Numbers.whole("--subscriber-buffer", 1...(1 << 30)))
    var subscriberBuffer: Int = 1 << 20

    @Option(
        name: .customLong("rebuild-share"),
        help: ArgumentHelp(
            "The share of one core, from 0.01 to 1, a rebuild (POST /projections/{name}/rebuild) takes while appends go on, so that their commits keep their latency: it rests between quanta of 2 ms of work; 1 never rests. A rebuild that falls behind the head (eight batches in a row that lose ground, or 32 that come no closer than it had come) goes on unpaced, so that it finishes.",
            valueName: "FRACTION"),
        transform: Numbers.decimal("--rebuild-share", 0.01...1))
    var rebuildShare: Double = RebuildPacing.default.share

    @Option(
        name: .customLong("grace"),
        help: ArgumentHelp("Seconds a stop (SIGTERM, Ctrl-C) lets requests in progress finish before it cuts them.", valueName: "S"),
        transform: Numbers.whole("--grace", 0...3_600))
    var grace: Int = 4

    @Option(
        name: .customLong("tls-cert"),
        help: ArgumentHelp("A PEM file with the server's certificate (then its chain): serve HTTPS, with --tls-key.", valueName: "FILE"))
    var tlsCert: String?

    @Option(
        name: .customLong("tls-key"),
        help: ArgumentHelp("The PEM file with the certificate's private key (unencrypted).", valueName: "FILE"))
    var tlsKey: String?

    @Option(
        name: .customLong("allow-origin"),
        help: ArgumentHelp(
            "A web origin (https://app.example) whose pages may call the server beside its own; repeat for more, * for any.",
            valueName: "ORIGIN"))
    var allowOrigin: [String] = []

    @Option(
        name: .customLong("allow-host"),
        help: ArgumentHelp(
            "A host name requests may be sent to beside the server's addresses, localhost and the machine's name (a proxy's name); repeat for more, * for any.",
            valueName: "NAME"))
    var allowHost: [String] = []

    @Option(
        name: .customLong("max-body"),
        help: ArgumentHelp("The largest request body in bytes; larger ones get 413.", valueName: "BYTES"),
        transform: Numbers.whole("--max-body", 1...(1 << 30)))
    var maxBody: Int = ServerOptions.defaultMaxBodyBytes

    /// The options of the apps built in (the shipped esctl's `--chat-room`).
    @OptionGroup var extras: Extras

    /// The token: `--token`, else the first line of `--token-file`, else `$ESCTL_TOKEN` when set
    /// and not empty. Throws ``CLIError`` when both flags are given or the file cannot be read.
    func effectiveToken() throws -> String? {
        if token != nil && tokenFile != nil {
            throw CLIError(.invalidInput, "Give the token once: --token or --token-file, not both.")
        }
        if let token { return token }
        if let tokenFile {
            guard let data = FileManager.default.contents(atPath: tokenFile), data.count <= 4096 else {
                throw CLIError(.invalidInput, "Cannot read the token file '\(tokenFile)' (or it is over 4 KiB); give a readable file whose first line is the token.")
            }
            let firstLine = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
            return firstLine.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if let fromEnvironment = ProcessInfo.processInfo.environment["ESCTL_TOKEN"], !fromEnvironment.isEmpty { return fromEnvironment }
        return nil
    }

    func validate() throws {
        if readOnly && create {
            throw ValidationError("--read-only serves an existing store; --create makes one: give one of them.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            MemoryReturn.mapLargeBuffers()
            var options = ServerOptions(host: host, port: port, token: try effectiveToken(), maxBodyBytes: maxBody)
            options.maxConnections = maxConnections
            options.idleTimeout = .seconds(idleTimeout)
            options.bodyTimeout = .seconds(bodyTimeout)
            options.stallTimeout = .seconds(stallTimeout)
            options.maxSubscribers = maxSubscribers
            options.maxWaits = maxWaits
            options.shutdownGrace = .seconds(grace)
            options.tlsCertificatePath = tlsCert
            options.tlsKeyPath = tlsKey
            options.allowedOrigins = allowOrigin
            options.allowedHosts = allowHost
            do {
                try options.validate()
            } catch let error as ServerError {
                throw CLIError(.invalidInput, error.message)
            }
            let grpcOptions = try self.grpcOptions(token: options.token)
            let metrics = ServerMetrics()
            let log: any EventLog
            let runner: ProjectionRunner
            do {
                (log, runner) = try await store.location.openRunnerOrReading(
                    readOnly: readOnly, announcing: true, durability: store.durability.durability, mode: create ? .createIfMissing : .existing,
                    metricsFactory: metrics.factory, subscriptionPageBytes: subscriberBuffer, rebuildPacing: RebuildPacing(share: rebuildShare))
            } catch let error as CLIError where error.status == .notFound {
                // A typo in --db would otherwise serve a new, empty store without a word.
                throw CLIError(
                    .notFound,
                    readOnly
                        ? "There is no store at '\(store.path)'; check --db (or $ESCTL_DB)."
                        : "There is no store at '\(store.path)'; check --db (or $ESCTL_DB), or add --create to serve a new, empty one there.")
            }
            return try await log.closingAfter {
                if let lmdb = log as? EventStore, lmdb.readsWithoutLock {
                    Console.note(
                        "\(Console.toolName): warning: reading \(lmdb.path) without LMDB's lock (this user may not write lock.mdb): correct only while no other process writes the store; to serve beside one, let this user write lock.mdb\n")
                }
                let grpc = grpcOptions.map { grpcOptions in
                    GRPCFace(store: log, options: grpcOptions, logger: accessLogger) { host, port in
                        Console.note(
                            "\(Console.toolName): serving \(log.location) over gRPC (umadb.v1.DCB) on \(grpcOptions.usesTLS ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)\n")
                    }
                }
                if let grpc, port == 0 {
                    // gRPC alone: no HTTP server, no projection daemon.
                    try await Self.serveAlone(grpc, grace: options.shutdownGrace, logger: accessLogger)
                    return
                }
                let server: Server
                do {
                    server = try Server(
                        store: log, runner: runner, apps: try store.location.selectedApps().modules, parts: extras.serverParts(), options: options, logger: accessLogger, metrics: metrics)
                } catch let error as ServerError where error.code == .invalidConfiguration {
                    throw CLIError(.invalidInput, error.message)
                }
                if !options.isLoopback && !options.usesTLS {
                    Console.note("\(Console.toolName): warning: serving on '\(host)' without TLS: the token and the session cookie cross the network in clear text; give --tls-cert and --tls-key, put a TLS proxy in front, or serve on loopback\n")
                }
                // The location as the store tells it: a PostgreSQL URL without its password.
                let shown = log.location
                let scheme = options.usesTLS ? "https" : "http"
                do {
                    try await server.run(alongside: grpc.map { [$0] } ?? []) { host, port in
                        Console.note("\(Console.toolName): serving \(shown) on \(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)\n")
                    }
                } catch let error as ServerError where error.code == .unavailable {
                    throw CLIError(.storeUnavailable, error.message)
                }
            }
        }
    }

    /// The gRPC face's options, when `--grpc-port` is given: its host and port, the token as its
    /// API key, and the TLS files of HTTP. Throws ``CLIError`` for another host without a token
    /// (the loopback rule of HTTP).
    func grpcOptions(token: String?) throws -> GRPCOptions? {
        guard let grpcPort else { return nil }
        var options = GRPCOptions(host: grpcHost, port: grpcPort, apiKey: token)
        options.tlsCertificatePath = tlsCert
        options.tlsKeyPath = tlsKey
        options.limits = GRPCLimits(maxSubscribers: maxSubscribers)
        options.maxConnections = maxConnections ?? 1024
        // HTTP's loopback rule, decided by the address as HTTP decides it.
        let loopback = ServerOptions(host: grpcHost, port: grpcPort).isLoopback
        if !loopback && (token?.count ?? 0) < ServerOptions.minimumTokenLength {
            throw CLIError(
                .invalidInput,
                "Serving gRPC on '\(grpcHost)' needs a token of 16 characters or more (--token, --token-file or $ESCTL_TOKEN); UmaDB's clients send it as their API key. Or serve on 127.0.0.1.")
        }
        if !loopback && !options.usesTLS {
            Console.note("\(Console.toolName): warning: serving gRPC on '\(grpcHost)' without TLS: the API key crosses the network in clear text; give --tls-cert and --tls-key\n")
        }
        return options
    }

    /// Serves the gRPC face alone until SIGTERM or SIGINT, then stops it gracefully (calls in
    /// flight finish within `grace`; streams are cut after it).
    static func serveAlone(_ face: GRPCFace, grace: Duration, logger: Logger) async throws {
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: face)], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
        configuration.maximumGracefulShutdownDuration = grace
        configuration.maximumCancellationDuration = .seconds(1)
        try await ServiceGroup(configuration: configuration).run()
    }

    /// The access log: to standard error at `--log-level` (default info, one line per request).
    var accessLogger: Logger {
        var logger = Logger(label: "esctl.serve") { label in StreamLogHandler.standardError(label: label) }
        logger.logLevel = store.location.logLevel ?? .info
        return logger
    }
}
