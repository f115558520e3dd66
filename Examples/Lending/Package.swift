// swift-tools-version:6.1
// A backend of a user's own, built the way a user would: a small lending library's domain as an
// app module (its events, a decider that lends a book only on the condition that nobody borrowed
// it since it looked, its read model), and `lendctl`, which is esctl carrying that module instead
// of the seed apps: every esctl command, `lendctl serve` with the module's commands at
// POST /apps/lending/..., its read model and the console. `make test` builds it and
// scripts/example-backend.sh drives it.
import Foundation
import PackageDescription

// A path dependency is identified by its directory's name, which is whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "LendingBackend",
    platforms: [.macOS(.v15)],
    dependencies: [
        // A user writes `.package(url: "https://github.com/OWNER/swift-lmdb-eventstore", from: "0.4.0", traits: ["CLI"])`:
        // the command line, without the PostgreSQL client.
        .package(path: "../..", traits: ["CLI"])
    ],
    targets: [
        .target(
            name: "Lending",
            dependencies: [
                .product(name: "EventStoreCore", package: root),
                .product(name: "Projections", package: root),
                .product(name: "Commands", package: root),
                .product(name: "AppModules", package: root),
            ]),
        .executableTarget(name: "lendctl", dependencies: ["Lending", .product(name: "EsctlCommands", package: root)]),
    ],
    swiftLanguageModes: [.v6]
)
