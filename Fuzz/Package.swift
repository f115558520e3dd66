// swift-tools-version:6.1
// libFuzzer targets over the record decoder, the NDJSON line parser and the apps. A package of its own, so
// normal builds never see -sanitize=fuzzer. Run with ../scripts/fuzz.sh (see RELIABILITY.md):
//   swift build -c release -Xswiftc -sanitize=fuzzer --product fuzz-record
import Foundation
import PackageDescription

// A path dependency is identified by its directory's name, which is whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let checks: [Target.Dependency] = [.product(name: "_FuzzChecks", package: root), "FuzzDriver"]

let package = Package(
    name: "EventStoreFuzz",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "fuzz-record", targets: ["fuzz-record"]),
        .executable(name: "fuzz-event-line", targets: ["fuzz-event-line"]),
        .executable(name: "fuzz-apps", targets: ["fuzz-apps"]),
    ],
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(name: "fuzz-record", dependencies: checks),
        .executableTarget(name: "fuzz-event-line", dependencies: checks),
        .executableTarget(name: "fuzz-apps", dependencies: checks),
    ],
    swiftLanguageModes: [.v6]
)
