// swift-tools-version:6.1
// The side-by-side benchmark: this store on LMDB and on PostgreSQL, raw LMDB with the same
// schema, and SQLite through GRDB. A package of its own, so the project's build and tests never compile the comparators.
// Run it with ../scripts/bench.sh (it installs what it needs and builds in release mode).
import Foundation
import PackageDescription

// A path dependency is identified by its directory's name, which is whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "EventStoreBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // S7's and S8's HTTP client.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // S15's gRPC client (the same for our server and UmaDB's).
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
    ],
    targets: [
        // Raw LMDB for the baseline contender (the root package's CLMDB is not a product).
        .systemLibrary(name: "CLMDBBench", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .executableTarget(
            name: "esbench",
            dependencies: [
                .product(name: "EventStore", package: root), .product(name: "Projections", package: root),
                .product(name: "Commands", package: root), .product(name: "_Apps", package: root),
                .product(name: "EventStoreTesting", package: root), .product(name: "EventStorePostgres", package: root), "CLMDBBench",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
                // S7 and S8: the server and its HTTP clients.
                .product(name: "HTTPServer", package: root), .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),
        // S15: the gRPC face against UmaDB's own server, one client for both (scripts/grpc-bench.sh).
        .executableTarget(
            name: "grpcbench",
            dependencies: [
                .product(name: "GRPCServer", package: root), .product(name: "EventStore", package: root),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
