#!/usr/bin/env bash
# Instructions per event of S3's rebuild (the domain projections over the realistic mix),
# counted by valgrind's callgrind: unlike rates, instruction counts do not drift with the
# machine's load, so they show progress that noisy rates hide. Rebuilds a store of N events and
# one of 1 event, and prints (I(N) - I(1)) / (N - 1), which leaves out opening and closing.
#   scripts/bench-instructions.sh [N]     (default 100000; installs valgrind when missing)
set -euo pipefail
N=${1:-100000}
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "installing valgrind with apt-get..." >&2
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq valgrind >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/bench.sh --child s3-fill --dir "$work/small" --count 1 >/dev/null
built="$(cd Benchmarks && swift build -c release --show-bin-path)/esbench"
"$built" --child s3-fill --dir "$work/large" --count "$N"
# Valgrind 3.19 cannot read the DWARF 5 of Swift's debug info: count on a copy without it.
bin="$work/esbench"
cp "$built" "$bin" && strip --strip-debug "$bin"
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$bin" --child s3-memory --dir "$1" 2>"$work/valgrind.log" >/dev/null || true
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/valgrind.log"
}
small=$(count "$work/small")
if [ -z "$small" ]; then
  echo "valgrind could not run esbench here:" >&2
  grep -m2 -E "INTERNAL ERROR|impossible|Giving up" "$work/valgrind.log" >&2 || tail -5 "$work/valgrind.log" >&2
  echo "(BENCHMARKS.md: valgrind 3.19 crashes inside libdispatch on this machine; S3 prints CPU time per event instead)" >&2
  exit 1
fi
large=$(count "$work/large")
echo "rebuild of $N events: $large instructions; of 1 event: $small"
echo "instructions per event: $(( (large - small) / (N - 1) ))"
