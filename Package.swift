// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "swift-lmdb-eventstore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "EventStore", targets: ["EventStore"]),
        .executable(name: "esctl", targets: ["esctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // liblmdb-dev, found through pkg-config; `make deps` installs it when missing.
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .target(name: "EventStore", dependencies: ["CLMDB"]),
        .executableTarget(
            name: "esctl",
            dependencies: ["EventStore", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .target(name: "TestSupport", dependencies: ["EventStore"], path: "Tests/TestSupport"),
        .testTarget(name: "EventStoreTests", dependencies: ["EventStore", "CLMDB", "TestSupport"]),
        .testTarget(name: "EsctlTests", dependencies: ["esctl", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
