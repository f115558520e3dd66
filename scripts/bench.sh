#!/usr/bin/env bash
# The side-by-side benchmark (BENCHMARKS.md): installs LMDB and SQLite's headers and wrk when missing,
# builds Benchmarks/ in release mode, and runs esbench with the given options
# (for example --json, --scenarios s1,s3, --full) beside a throwaway PostgreSQL cluster with
# durable settings (scripts/with-postgres.sh --durable), the PostgreSQL contender's database.
# See `scripts/bench.sh --help`.
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
missing=()
pkg-config --exists lmdb 2>/dev/null || missing+=(liblmdb-dev)
pkg-config --exists sqlite3 2>/dev/null || missing+=(libsqlite3-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
# S7's light external client (BENCHMARKS.md, "S7: appends over HTTP").
command -v wrk >/dev/null || missing+=(wrk)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} with apt-get..." >&2
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# SwiftPM can keep a stale build plan for the root package (a path dependency here): a source
# file added there is then missing from the build. Dropping the plan makes it read them again.
rm -f .build/release.yaml
# And it may not recompile the benchmark itself when only the root package's private code changed,
# though release builds inline that code into it (a class's size, for one: a stale copy corrupts
# the heap). The benchmark's own module is rebuilt every time.
rm -rf "$(swift build -c release --show-bin-path)/esbench.build"
swift build -c release --product esbench >&2
exec ../scripts/with-postgres.sh --durable --no-failover-pair "$(swift build -c release --show-bin-path)/esbench" "$@"
