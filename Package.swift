// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "swift-lmdb-eventstore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "EventStore", targets: ["EventStore"]),
        .library(name: "Projections", targets: ["Projections"]),
        .library(name: "Commands", targets: ["Commands"]),
        .executable(name: "esctl", targets: ["esctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // liblmdb-dev, found through pkg-config; `make deps` installs it when missing.
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .target(name: "EventStore", dependencies: ["CLMDB"]),
        .target(name: "Projections", dependencies: ["EventStore"]),
        .target(name: "Commands", dependencies: ["Projections"]),
        .executableTarget(
            name: "esctl",
            dependencies: ["Commands", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .target(name: "TestSupport", dependencies: ["EventStore"], path: "Tests/TestSupport"),
        .testTarget(name: "EventStoreTests", dependencies: ["EventStore", "CLMDB", "TestSupport"]),
        .testTarget(name: "ProjectionsTests", dependencies: ["Projections", "TestSupport"]),
        .testTarget(name: "CommandsTests", dependencies: ["Commands", "TestSupport"]),
        .testTarget(name: "EsctlTests", dependencies: ["esctl", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
