#!/usr/bin/env bash
# The side-by-side benchmark (BENCHMARKS.md): installs LMDB and SQLite's headers and wrk when missing,
# builds Benchmarks/ in release mode, and runs esbench with the given options
# (for example --json, --scenarios s1,s3, --full) beside a throwaway PostgreSQL cluster with
# durable settings (scripts/with-postgres.sh --durable), the PostgreSQL contender's database.
# See `scripts/bench.sh --help`.
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
source ../scripts/lib/bench-deps.sh
bench_install_deps
# SwiftPM can keep a stale build plan for the root package (a path dependency here): a source
# file added there is then missing from the build. Dropping the plan makes it read them again.
rm -f .build/release.yaml
# And it may not recompile the benchmark itself when only the root package's private code changed,
# though release builds inline that code into it (a class's size, for one: a stale copy corrupts
# the heap). The benchmark's own module is rebuilt every time.
# A fixed hash seed for SwiftPM (not for esbench): it keeps the enabled traits in a Set, and
# without one each new plan orders their flags anew and recompiles the dependencies (docs/testing.md).
bin=$(SWIFT_DETERMINISTIC_HASHING=1 swift build -c release --show-bin-path)
rm -rf "$bin/esbench.build"
SWIFT_DETERMINISTIC_HASHING=1 swift build -c release --product esbench >&2
exec ../scripts/with-postgres.sh --durable --no-failover-pair "$bin/esbench" "$@"
