// swift-tools-version:6.1
import PackageDescription

// The layers, from the bottom: EventStoreCore (the API, no database), the backends
// (EventStoreLMDB, re-exported with the core as EventStore; EventStorePostgres), the engines
// (Projections, Commands, ConsumerGroups), AppModules (what an app brings to a backend), the
// seed apps, then the faces (the HTTP server, esctl). ARCHITECTURE.md draws them. A library user
// depends on the products EventStore (or EventStorePostgres), Projections, Commands,
// ConsumerGroups, AppModules and EventStoreTesting, which need swift-log, swift-crypto (its AES-GCM
// seals personal data) and swift-metrics' CoreMetrics; esctl's argument parser comes with the
// trait "CLI" (on by default), so a package that depends on this one with `traits: []` does not
// resolve or build it.
let package = Package(
    name: "swift-lmdb-eventstore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "EventStore", targets: ["EventStore"]),
        // The store's API alone, for code that works on any backend (and a backend of your own).
        .library(name: "EventStoreCore", targets: ["EventStoreCore"]),
        .library(name: "Projections", targets: ["Projections"]),
        .library(name: "Commands", targets: ["Commands"]),
        .library(name: "ConsumerGroups", targets: ["ConsumerGroups"]),
        // What an app brings to a backend (read models, upcasters, commands), for faces to register.
        .library(name: "AppModules", targets: ["AppModules"]),
        .library(name: "EventStoreTesting", targets: ["EventStoreTesting"]),
        // The same store on PostgreSQL, for many processes on many hosts (docs/SCALING.md). A
        // product of its own, so that users of the embedded store never build a PostgreSQL client.
        .library(name: "EventStorePostgres", targets: ["EventStorePostgres"]),
        .executable(name: "esctl", targets: ["esctl"]),
        // The store over HTTP, for a program of your own (`esctl serve` is one).
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        // esctl as a library: its generic commands, for an esctl of your own with your apps.
        .library(name: "EsctlCommands", targets: ["EsctlCommands"]),
        // The store over gRPC, speaking UmaDB's DCB protocol (`esctl serve --grpc-port` is one).
        .library(name: "GRPCServer", targets: ["GRPCServer"]),
        // Internal, not an API: the properties the fuzz package (Fuzz/) checks, and the demo apps
        // the benchmark package (Benchmarks/) runs.
        .library(name: "_FuzzChecks", targets: ["FuzzChecks"]),
        .library(name: "_Apps", targets: ["Apps"]),
    ],
    traits: [
        .trait(name: "CLI", description: "The esctl command-line tool and its argument parser."),
        .trait(name: "PostgreSQL", description: "esctl on PostgreSQL databases (postgres:// URLs in --db)."),
        .default(enabledTraits: ["CLI", "PostgreSQL"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // AES-GCM for personal data (one key per subject; forgetting destroys the key).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // The server (HTTPServer, esctl serve) and its tests only.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The server's own channel handlers (connection cap, timeouts) and its raw-socket tests.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The store's metrics (any backend a program bootstraps), and their Prometheus form for /metrics.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The gRPC face (GRPCServer) only: UmaDB's DCB protocol over HTTP/2. Its Swift code is
        // generated once by scripts/protos.sh (Protos/) and committed, so no plugin builds here.
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        // The gRPC tests' client only: the face serves HTTP/2 with a transport of its own.
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
    ],
    targets: [
        // liblmdb-dev, found through pkg-config; `make deps` installs it when missing.
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        // CRC-32C with the processor's instruction where it has one (the records' checksums).
        .target(name: "CRC32C"),
        // The canonical JSON form: a scanner and writer over bytes, JSONValue, and Codable
        // without Foundation's JSON. The core re-exports it; it knows nothing of events.
        .target(name: "EventStoreJSON"),
        // The core: the API every backend shares (values, protocols, errors, the canonical JSON
        // form, the record format, upcasting, personal-data sealing, subscriptions). It links no
        // database (scripts/import-rules.sh checks it).
        .target(
            name: "EventStoreCore",
            dependencies: [
                "CRC32C", "EventStoreJSON", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"), .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // The embedded backend: the log and its tables in LMDB, its writer thread. The only
        // module that imports CLMDB.
        .target(
            name: "EventStoreLMDB",
            dependencies: [
                "EventStoreCore", "CLMDB", "CRC32C", .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]),
        // What users import: the core and the LMDB backend, re-exported.
        .target(name: "EventStore", dependencies: ["EventStoreCore", "EventStoreLMDB"]),
        // The PostgreSQL backend: the core's protocols on postgres-nio. Only this target (and
        // what depends on it) compiles a PostgreSQL client; it links no LMDB.
        .target(
            name: "EventStorePostgres",
            dependencies: ["EventStoreCore", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "Projections",
            dependencies: ["EventStoreCore", .product(name: "Logging", package: "swift-log"), .product(name: "CoreMetrics", package: "swift-metrics")]),
        .target(name: "Commands", dependencies: ["EventStoreCore", .product(name: "Logging", package: "swift-log")]),
        .target(name: "ConsumerGroups", dependencies: ["EventStoreCore"]),
        .target(name: "EventStoreTesting", dependencies: ["EventStore", "Commands"]),
        // The shape of an app module, and the choice of modules a face registers (`--apps`).
        .target(name: "AppModules", dependencies: ["EventStoreCore", "Projections", "Commands"]),
        // The four demo apps: their events, states, deciders and read models, as app modules. Not a product.
        .target(
            name: "Apps", dependencies: ["EventStoreCore", "Projections", "Commands", "AppModules"], path: "Sources/Apps/Domain",
            // Each app's part of the server's OpenAPI document.
            resources: ["fitness", "chat", "campground", "color"].map { .embedInCode("OpenAPI/\($0).yaml") }),
        // The JSON and NDJSON forms of events that esctl (and the server) read and write.
        .target(name: "WireFormat", dependencies: ["EventStoreCore", "Projections"]),
        // `esctl serve`: the store, the read models and the apps over HTTP (Hummingbird). Only this
        // target and what depends on it compile an HTTP server.
        .target(
            name: "HTTPServer",
            dependencies: [
                "EventStore", "Projections", "Commands", "AppModules", "WireFormat",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                // TLS for HTTP (--tls-cert/--tls-key); NIOSSL is built for PostgreSQL's TLS anyway.
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The console's page, styles and scripts, compiled into the binary: `esctl serve`
            // needs no file beside it, and an installed esctl serves the same page.
            // And the generic part of the OpenAPI document (the served apps add theirs).
            resources: ConsoleAssetFiles.names.map { .embedInCode("Console/\($0)") } + [.embedInCode("OpenAPI/openapi.yaml")]),
        // `esctl serve --grpc-port`: the store over gRPC as UmaDB's DCB service (and gRPC health).
        // Only this target and what depends on it compile gRPC.
        .target(
            name: "GRPCServer",
            dependencies: [
                "EventStoreCore",
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // esctl's generic commands, as a library.
        .target(
            name: "EsctlCommands",
            dependencies: [
                "EventStore", "Projections", "Commands", "ConsumerGroups", "AppModules", "WireFormat", "HTTPServer", "GRPCServer",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .target(name: "EventStorePostgres", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CLI"])),
            ]),
        // The seed apps' own esctl subcommands.
        .target(
            name: "AppsCLI",
            dependencies: [
                "Apps", "AppsServer", "AppModules", "EsctlCommands", "HTTPServer", "EventStore", "Projections", "Commands", "WireFormat",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CLI"])),
            ],
            path: "Sources/Apps/CLI"),
        // The seed apps' faces on the server: their console views and the chat's own protocol.
        .target(
            name: "AppsServer",
            dependencies: [
                "Apps", "AppModules", "HTTPServer", "EventStore", "WireFormat",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            path: "Sources/Apps/Server",
            resources: ["workout", "chat", "camp", "color"].flatMap { [.embedInCode("Console/\($0).js"), .embedInCode("Console/\($0).css")] }
                + [.embedInCode("OpenAPI/chat-protocol.yaml")]),
        // The shipped esctl: the generic commands with the seed apps.
        .executableTarget(
            name: "esctl",
            dependencies: [
                "EsctlCommands", "Apps", "AppsCLI", "AppsServer",
            ]),
        .target(name: "FuzzChecks", dependencies: ["EventStore", "Projections", "Commands", "Apps", "WireFormat"], path: "Tests/FuzzChecks"),
        // Starts the tests' child processes without Foundation's Process (see its header).
        .target(name: "CChildProcess", path: "Tests/CChildProcess"),
        .target(
            name: "TestSupport", dependencies: ["EventStore", "EventStoreTesting", "CChildProcess", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"),
        // A writer the reliability tests start and kill (not a product: tests build it).
        .executableTarget(
            name: "torture-writer",
            dependencies: ["CLMDB", "EventStore", "EventStorePostgres", "Projections", "Commands", "ConsumerGroups", "Apps", "TestSupport"],
            path: "Tests/TortureWriter"),
        .testTarget(
            name: "EventStoreTests",
            dependencies: ["EventStore", "EventStoreCore", "EventStoreJSON", "EventStoreLMDB", "CLMDB", "CRC32C", "EventStoreTesting", "TestSupport", .product(name: "Logging", package: "swift-log")]),
        // Throwaway PostgreSQL databases for the tests that need the server.
        .target(
            name: "PostgresTestSupport",
            dependencies: ["EventStore", "EventStorePostgres", .product(name: "PostgresNIO", package: "postgres-nio")],
            path: "Tests/PostgresTestSupport"),
        // A projection the projection tests of every backend and the LMDB-only ones share.
        .target(name: "ProjectionsTestSupport", dependencies: ["EventStore", "Projections"], path: "Tests/ProjectionsTestSupport"),
        // The conformance suite, run against every backend (LMDB always, PostgreSQL on the throwaway
        // cluster of scripts/with-postgres.sh): the log, the tables, projections, processors,
        // commands, snapshots and the apps. esctl is the other process that appends.
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "EventStore", "EventStoreCore", "EventStoreLMDB", "EventStorePostgres", "EventStoreTesting", "TestSupport", "PostgresTestSupport", "Projections",
                "ProjectionsTestSupport", "Commands", "ConsumerGroups", "Apps", "esctl", .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]),
        // What is LMDB's own (the documented bytes) and what needs no store.
        .testTarget(name: "ProjectionsTests", dependencies: ["Projections", "EventStore", "Apps", "TestSupport", "ProjectionsTestSupport"]),
        .testTarget(name: "AppsTests", dependencies: ["Apps", "AppModules", "Commands", "Projections", "EventStore", "EventStoreTesting", "TestSupport"]),
        .testTarget(name: "EsctlTests", dependencies: ["esctl", "EventStore", "Commands", "WireFormat", "TestSupport", "PostgresTestSupport"]),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "esctl", "torture-writer", "EventStore", "EventStorePostgres", "Projections", "Commands", "Apps", "WireFormat", "FuzzChecks",
                "TestSupport", "PostgresTestSupport",
            ]),
        // The server's routes in process (HummingbirdTesting) and over loopback (AsyncHTTPClient).
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "HTTPServer", "EventStore", "Projections", "Commands", "ConsumerGroups", "AppModules", "Apps", "AppsServer", "WireFormat", "EventStoreTesting", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // The gRPC face in process and over loopback, with the generated client.
        .testTarget(
            name: "GRPCServerTests",
            dependencies: [
                "GRPCServer", "EventStore", "EventStoreTesting", "TestSupport", "WireFormat",
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)

/// The console's files (Sources/HTTPServer/Console). HTTPServer's ConsoleAssets serves each one,
/// and ServerTests check that every file of that directory is listed and served.
enum ConsoleAssetFiles {
    static let names = [
        "index.html", "console.css", "favicon.svg",
        "main.js", "api.js", "tail.js", "charts.js", "projections.js", "tables.js", "commands.js",
    ]
}
