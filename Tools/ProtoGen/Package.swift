// swift-tools-version:6.1
import PackageDescription

// The protoc plugins that generate the gRPC face's Swift code (scripts/protos.sh builds them
// here, in a package of their own, so that the main package never builds a code generator).
// Their versions are the runtime's: the generated code checks swift-protobuf's API version, and
// protoc-gen-grpc-swift-2 must not be newer than grpc-swift-protobuf.
let package = Package(
    name: "ProtoGen",
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", exact: "2.4.1"),
    ],
    targets: []
)
