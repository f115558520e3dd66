#!/usr/bin/env bash
# S15 (BENCHMARKS.md): the gRPC face against UmaDB itself, side by side in one run. Builds the
# benchmark (Benchmarks/, target grpcbench: the gRPC client, and our face in process) in release, installs
# UmaDB's server from PyPI into .build/umadb-venv when missing (umadb 0.7.8, as the client
# tests), then runs the same scenarios with the same client against our gRPC face (the one
# `esctl serve --grpc-port` runs, at durability full) and against `umadb` (which syncs every
# commit), each on a fresh directory,
# and prints the ratios, ours / UmaDB's.
#   scripts/grpc-bench.sh [SCALE]   (SCALE multiplies every count; 1, the default, appends and
#                                   reads a million events on each server: a few minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-1}
name=grpc-bench.sh
source scripts/grpc-servers.sh
ensure_venv
make deps >&2
# SwiftPM may keep a stale plan of the root package's sources (a path dependency): drop it.
rm -f Benchmarks/.build/release.yaml
# Nor may it recompile the benchmark when only the root package's private code changed, though
# release builds inline that code into it (a stale copy of a class's size corrupts the heap).
# A fixed hash seed for SwiftPM, as in scripts/bench.sh (else each new plan recompiles the
# dependencies whose trait flags it ordered anew).
bin=$(SWIFT_DETERMINISTIC_HASHING=1 swift build -c release --package-path Benchmarks --show-bin-path)
rm -rf "$bin/grpcbench.build"
SWIFT_DETERMINISTIC_HASHING=1 swift build -c release --package-path Benchmarks --product grpcbench >&2
bench="$bin/grpcbench"
# Bounded: a server that stops answering ends the run, not the machine's afternoon.
timeout -k 10 3600 "$bench" --umadb "$PWD/$venv/bin/umadb" --scale "$scale"
