// swift-tools-version:6.1
// A small app built on the event store the way a user of the library would build one: its own
// to-do list's events, decider, projection, a reaction to new events, its tests, and a short
// `main`. It uses the public products only (EventStoreCore for the app itself, which runs on any
// backend; EventStore, the LMDB store, for its `main`; Projections, Commands, and
// EventStoreTesting in its tests), and leaves the root package's esctl trait off, so it builds
// nothing of the command-line tool. `make test` builds and tests it.
import Foundation
import PackageDescription

// A path dependency is identified by its directory's name, which is whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "EventStoreExamples",
    platforms: [.macOS(.v15)],
    dependencies: [
        // A user writes `.package(url: "https://github.com/OWNER/swift-lmdb-eventstore", from: "0.4.0", traits: [])`.
        .package(path: "..", traits: [])
    ],
    targets: [
        .target(
            name: "Todo",
            dependencies: [
                // The app's domain works on any backend: it needs the store's API, not LMDB.
                .product(name: "EventStoreCore", package: root),
                .product(name: "Projections", package: root),
                .product(name: "Commands", package: root),
            ]),
        .executableTarget(name: "todo", dependencies: ["Todo", .product(name: "EventStore", package: root)]),
        // The README's and the articles' Swift code, compiled (a test in the root package checks
        // that every block of theirs appears here word for word).
        .target(
            name: "Snippets",
            dependencies: [
                "Todo",
                .product(name: "EventStore", package: root),
                .product(name: "Projections", package: root),
                .product(name: "Commands", package: root),
                .product(name: "ConsumerGroups", package: root),
                .product(name: "EventStoreTesting", package: root),
            ]),
        .testTarget(
            name: "TodoTests",
            dependencies: [
                "Todo", .product(name: "EventStore", package: root), .product(name: "Projections", package: root),
                .product(name: "Commands", package: root), .product(name: "EventStoreTesting", package: root),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
