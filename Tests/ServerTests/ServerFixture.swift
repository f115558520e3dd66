import AppModules
import Apps
import AppsServer
import EventStore
import EventStoreTesting
import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import NIOCore
import Projections

/// A server on a fresh temporary store (deterministic times and ids), for the route tests.
enum ServerFixture {
    /// Runs `body` with a server over a fresh store and a HummingbirdTesting client: `.router`
    /// (in process, no sockets) by default, `.live` for what needs a real connection. The store
    /// is opened with the server's metrics factory and the apps' upcasters, as `esctl serve` opens
    /// it; the seed apps' server parts are given, as `esctl serve` gives them (the server keeps
    /// those of `apps`).
    static func with<R: Sendable>(
        apps: [any AppModule] = AppCatalog.modules, parts: [any AppServerParts] = SeedServerParts.all(), options: ServerOptions = ServerOptions(port: 0), clock: any Clock<Duration> = ContinuousClock(),
        testing: TestingSetup = .router,
        _ body: @escaping @Sendable (Server, any TestClientProtocol) async throws -> R
    ) async throws -> R {
        let metrics = ServerMetrics()
        var configuration = TemporaryStore.deterministicConfiguration()
        configuration.metricsFactory = metrics.factory
        configuration.upcasters = apps.flatMap(\.upcasters)
        return try await TemporaryStore.with(configuration: configuration) { store in
            let runner = try await ProjectionRunner(store: store, projections: apps.flatMap(\.projections) + LogSummaries.all, clock: clock)
            let server = try Server(store: store, runner: runner, apps: apps, parts: parts, options: options, clock: clock, metrics: metrics)
            return try await test(server, testing) { client in try await body(server, client) }
        }
    }

    /// How long a test of a server may take, its body and the server's graceful stop after it
    /// together. A connection the test leaves open (a stream, a wait) holds a live server's stop,
    /// which HummingbirdTesting does not bound: the suite would hang there, not fail.
    static let bound: Duration = .seconds(300)

    /// Runs `body` against `server`'s application through HummingbirdTesting (`testing`),
    /// failing with a ``TimeoutError`` that says so when it and the stop after it outlast ``bound``.
    static func test<R: Sendable>(
        _ server: Server, _ testing: TestingSetup, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> R
    ) async throws -> R {
        try await withTimeout(bound, "the test and the server's graceful stop after it (a connection the test left open holds the stop)") {
            try await server.application().test(testing, body)
        }
    }
}

extension TestResponse {
    /// The body as text.
    var text: String { String(buffer: body) }

    /// The body as a JSON object (an empty one when it is not).
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
    }
}

extension ByteBuffer {
    init(json: String) { self.init(string: json) }
}
