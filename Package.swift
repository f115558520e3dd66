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
        // The fuzz package (Fuzz/) and the regression tests share these checks.
        .library(name: "FuzzChecks", targets: ["FuzzChecks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // liblmdb-dev, found through pkg-config; `make deps` installs it when missing.
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        // CRC-32C with the processor's instruction where it has one (the records' checksums).
        .target(name: "CRC32C"),
        .target(name: "EventStore", dependencies: ["CLMDB", "CRC32C"]),
        .target(name: "Projections", dependencies: ["EventStore"]),
        .target(name: "Commands", dependencies: ["Projections"]),
        .executableTarget(
            name: "esctl",
            dependencies: ["Commands", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .target(name: "FuzzChecks", dependencies: ["Commands"], path: "Tests/FuzzChecks"),
        .target(name: "TestSupport", dependencies: ["EventStore"], path: "Tests/TestSupport"),
        // A writer the reliability tests start and kill (not a product: tests build it).
        .executableTarget(name: "torture-writer", dependencies: ["EventStore", "Projections", "TestSupport"], path: "Tests/TortureWriter"),
        .testTarget(name: "EventStoreTests", dependencies: ["EventStore", "CLMDB", "CRC32C", "TestSupport"]),
        .testTarget(name: "ProjectionsTests", dependencies: ["Projections", "TestSupport"]),
        .testTarget(name: "CommandsTests", dependencies: ["Commands", "TestSupport"]),
        .testTarget(name: "EsctlTests", dependencies: ["esctl", "TestSupport"]),
        .testTarget(name: "ReliabilityTests", dependencies: ["esctl", "torture-writer", "TestSupport", "Projections", "FuzzChecks"]),
    ],
    swiftLanguageModes: [.v6]
)
