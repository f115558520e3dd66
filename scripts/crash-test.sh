#!/usr/bin/env bash
# The long crash-safety run (RELIABILITY.md): kills the torture writer with SIGKILL KILLS times
# (default 1000, half with durability full, half with noMetaSync) and checks the store after each
# kill; then kills rebuilds and an import, and runs four contending processes.
#   scripts/crash-test.sh [KILLS]
# CI runs the same tests with 100 kills (`make test`). Prints the figures at the end.
set -euo pipefail
kills=${1:-1000}
cd "$(dirname "$0")/.."
make -s deps
swift build --build-tests >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
started=$(date +%s)
if CRASH_KILLS=$kills swift test --skip-build --filter 'CrashTests|ProcessConcurrencyTests' >"$log" 2>&1; then
  result=passed
else
  result=FAILED
  grep -E '✘|Expectation failed|error' "$log" | head -n 40 >&2 || true
fi
grep '^figures: ' "$log" | sed 's/^figures: //'
echo "crash tests $result with CRASH_KILLS=$kills in $(( $(date +%s) - started )) s"
[ "$result" = passed ]
