#!/usr/bin/env bash
# Builds one of the example packages (Examples, Examples/Lending) in the root package's .build,
# so that the dependencies the root package compiled (SwiftNIO, Hummingbird, gRPC, SwiftProtobuf,
# swift-crypto and its BoringSSL...) are not compiled again: SwiftPM puts every target of a
# graph, root or dependency, in SCRATCH/<triple>/debug/<target>.build, and llbuild skips a
# command whose command line and inputs it has already seen. Built cold in a .build of their own,
# the two examples took about 12.5 minutes of `make test` on 2 cores; here 50 and 85 s
# (a fresh clone's run, 2026-12-07).
#
#   scripts/build-example.sh PACKAGE_DIR [SWIFT_BUILD_ARGUMENT...]
#
# The build plan is dropped before and after: SwiftPM keeps one plan per scratch directory and
# reuses it when no manifest changed, so finding the root's there it builds nothing of the
# example (checked: it says "Build complete!"), and the root's next `swift build` would build the
# example's plan. The price is on the root package's side: its next `swift build` plans again
# and recompiles its own targets (they are compiled with other trait flags as a dependency), a
# few minutes, which `make test` pays nowhere because the examples come last. Prints the
# directory of the built products.
set -euo pipefail
cd "$(dirname "$0")/.."
package=${1:?usage: scripts/build-example.sh PACKAGE_DIR [SWIFT_BUILD_ARGUMENT...]}
shift
[ -f "$package/Package.swift" ] || { echo "build-example.sh: no package at $package" >&2; exit 66; }
scratch="$PWD/.build"
rm -f "$scratch/debug.yaml"
trap 'rm -f "$scratch/debug.yaml"' EXIT
swift build --package-path "$package" --scratch-path "$scratch" "$@" >&2
swift build --package-path "$package" --scratch-path "$scratch" --show-bin-path
