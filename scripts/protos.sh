#!/usr/bin/env bash
# Regenerates the gRPC face's Swift code (Sources/GRPCServer/Generated) from Protos/: builds the
# protoc plugins in their own package (Tools/ProtoGen, into .build-protogen, pinned to the
# runtime's versions), installs Debian's protoc when missing, and runs it. The generated files
# are committed: the main build never runs a code generator. Run it after changing a .proto.
#   scripts/protos.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v protoc >/dev/null; then
    echo "protos.sh: installing protobuf-compiler with apt-get" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler >/dev/null
fi
scratch=.build-protogen
for product in protoc-gen-swift protoc-gen-grpc-swift-2; do
    swift build --package-path Tools/ProtoGen --scratch-path "$scratch" --product "$product" >&2
done
bin=$(swift build --package-path Tools/ProtoGen --scratch-path "$scratch" --show-bin-path)
out=Sources/GRPCServer/Generated
rm -rf "$out"
mkdir -p "$out"
# PathToUnderscores: the two protos' base names could clash one day; the path keeps them apart.
protoc -I Protos \
    --plugin=protoc-gen-swift="$bin/protoc-gen-swift" \
    --plugin=protoc-gen-grpc-swift-2="$bin/protoc-gen-grpc-swift-2" \
    --swift_opt=Visibility=Public --swift_opt=FileNaming=PathToUnderscores \
    --swift_out="$out" \
    --grpc-swift-2_opt=Visibility=Public --grpc-swift-2_opt=FileNaming=PathToUnderscores \
    --grpc-swift-2_opt=Client=true --grpc-swift-2_opt=Server=true \
    --grpc-swift-2_out="$out" \
    umadb/v1/umadb.proto grpc/health/v1/health.proto
echo "protos.sh: generated $(ls "$out" | tr '\n' ' ')" >&2
