#!/usr/bin/env bash
# Fuzzes the record decoder, the NDJSON line parser and the apps with libFuzzer (RELIABILITY.md).
#   scripts/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]   (default 600 s each; targets: record, event-line, apps)
# Builds Fuzz/ in release mode with -sanitize=fuzzer, starts each target from Fuzz/Seeds plus the
# corpus of earlier runs (Fuzz/.corpus, not in git), and writes any crasher to
# Fuzz/Regressions/<target>/, where the regression tests replay it. Exits 1 when one is found.
set -euo pipefail
seconds=${1:-600}
case $seconds in ''|*[!0-9]*) echo "the first argument is seconds per target, a number (got '$seconds')" >&2; exit 2 ;; esac
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(record event-line apps)
for target in "${targets[@]}"; do
  case $target in record|event-line|apps) ;; *) echo "unknown target '$target': give record, event-line or apps" >&2; exit 2 ;; esac
done
cd "$(dirname "$0")/../Fuzz"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
if ! pkg-config --exists lmdb 2>/dev/null; then
  echo "installing liblmdb-dev with apt-get..." >&2
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq liblmdb-dev pkg-config >/dev/null
fi
# lld: gold fails on the instrumented objects' debug information.
flags=(-c release -Xswiftc -sanitize=fuzzer -Xswiftc -use-ld=lld)
# SwiftPM can keep a stale build plan for the root package (a path dependency here): a source
# file added there is then missing from the build. Dropping the plan makes it read them again.
rm -f .build/release.yaml
swift build "${flags[@]}" >&2
bin=$(swift build "${flags[@]}" --show-bin-path)

status=0
summary=()
for target in "${targets[@]}"; do
  corpus=.corpus/$target
  mkdir -p "$corpus" "Regressions/$target"
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="Regressions/$target/")
  [ -f "$target.dict" ] && options+=(-dict="$target.dict")
  log=$(mktemp)
  echo "fuzzing $target for $seconds s..." >&2
  if "$bin/fuzz-$target" "${options[@]}" "$corpus" "Seeds/$target" >"$log" 2>&1; then result=ok; else result="FOUND A CRASHER"; status=1; fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  units=$(ls "$corpus" | wc -l)
  summary+=("$(printf '%-11s %6s s  %12s executions  %8s/s  corpus %6s  %s' "$target" "$seconds" "${runs:-?}" "${rate:-?}" "$units" "$result")")
  [ "$result" = ok ] || tail -n 40 "$log" >&2
  rm -f "$log"
done
printf '%s\n' "${summary[@]}"
exit $status
