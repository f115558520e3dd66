import ArgumentParser
import EventStore
import Foundation
import HTTPServer
import Logging

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the store over HTTP: the JSON API, live streams, the chat app's protocol, a web console.",
        discussion: """
            Listens on 127.0.0.1:8080 unless --host and --port say otherwise (--port 0 takes a free \
            port) and says so on standard error: `esctl: serving STORE on http://HOST:PORT`. A host \
            that is not loopback needs a token (--token or $ESCTL_TOKEN); with a token every route \
            but /health and the console's files needs it as `Authorization: Bearer TOKEN` or the \
            cookie POST /session sets. Open http://HOST:PORT/ in a browser for the console: the live \
            log, the projections and the apps (it asks for the token when there is one). While it \
            serves, every projection follows the commits. One access line per request goes to \
            standard error (--log-level warning silences them). \
            SIGTERM or Ctrl-C stops it gracefully: open streams end, appends in flight finish, the \
            store is closed, and it exits 0. The README's "Serving over HTTP" lists the routes; \
            GET /openapi.yaml serves their OpenAPI document.
            """)

    @OptionGroup var store: WritingStoreOptions

    @Option(help: ArgumentHelp("The address to listen on.", valueName: "H"))
    var host: String = "127.0.0.1"

    @Option(help: ArgumentHelp("The port to listen on; 0 takes a free one.", valueName: "P"), transform: Numbers.whole("--port", 0...65535))
    var port: Int = 8080

    @Option(help: ArgumentHelp("The token every route but /health needs. Default: $ESCTL_TOKEN, else none (loopback only).", valueName: "T"))
    var token: String?

    @Option(
        name: .customLong("max-body"),
        help: ArgumentHelp("The largest request body in bytes; larger ones get 413.", valueName: "BYTES"),
        transform: Numbers.whole("--max-body", 1...(1 << 30)))
    var maxBody: Int = ServerOptions.defaultMaxBodyBytes

    @Option(name: .customLong("chat-room"), help: ArgumentHelp("The chat room of /chat/room and /chat/say.", valueName: "NAME"))
    var chatRoom: String = "default"

    /// The token: `--token`, else `$ESCTL_TOKEN` when set and not empty.
    var effectiveToken: String? {
        if let token { return token }
        if let fromEnvironment = ProcessInfo.processInfo.environment["ESCTL_TOKEN"], !fromEnvironment.isEmpty { return fromEnvironment }
        return nil
    }

    func run() async throws {
        try await reportingErrors {
            let options = ServerOptions(host: host, port: port, token: effectiveToken, maxBodyBytes: maxBody, chatRoom: chatRoom)
            do {
                try options.validate()
            } catch let error as ServerError {
                throw CLIError(.invalidInput, error.message)
            }
            let metrics = ServerMetrics()
            let (log, runner) = try await store.location.openRunner(
                durability: store.durability.durability, mode: .createIfMissing, metricsFactory: metrics.factory)
            defer { log.close() }
            let server = try Server(store: log, runner: runner, options: options, logger: accessLogger, metrics: metrics)
            // The location as the store tells it: a PostgreSQL URL without its password.
            let shown = log.location
            try await server.run { host, port in
                Console.note("esctl: serving \(shown) on http://\(host.contains(":") ? "[\(host)]" : host):\(port)\n")
            }
        }
    }

    /// The access log: to standard error at `--log-level` (default info, one line per request).
    var accessLogger: Logger {
        var logger = Logger(label: "esctl.serve") { label in StreamLogHandler.standardError(label: label) }
        logger.logLevel = store.location.logLevel ?? .info
        return logger
    }
}
