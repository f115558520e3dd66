#!/usr/bin/env bash
# Runs a command (the test suite) with the cooperative-pool check loaded into the test process
# and the esctl and torture-writer processes it starts, and fails when any of them let a task
# block a thread of Swift's cooperative pool for long: a task that sleeps in the kernel (a
# blocking read or wait, a semaphore, a future's wait()) for ESTEST_POOL_BLOCKED_MS (default
# 1000) without a break. See Tests/PoolCheck/pool_check.c for how and why.
#
#   scripts/pool-check.sh COMMAND [ARGUMENT...]
#
# Environment: ESTEST_POOL_BLOCKED_MS (the threshold), ESTEST_POOL_WIDTH=N (run Swift's pool N
# tasks wide instead of one per CPU; 1 turns a task that waits on another task into a finding).
# Diagnostics that fail nothing: ESTEST_POOL_STALL_MS=N (say when the pool starts nothing new for
# N ms), ESTEST_POOL_LONG_JOB_MS=N with ESTEST_POOL_INFO=FILE (the stack of every job that runs
# N ms or more, symbolized into FILE.txt), ESTEST_POOL_PENDING_SAMPLE=N with ESTEST_POOL_INFO=FILE
# (the stacks that hand the pool a job while N or more wait).
# Exits with the command's status when it failed, 1 when only the check found something, else 0.
# Each finding is printed with its thread's stack, symbolized.
set -uo pipefail
cd "$(dirname "$0")/.."

dir=.build/pool-check
library="$dir/libpoolcheck.so"
source=Tests/PoolCheck/pool_check.c
mkdir -p "$dir"
if [ ! -f "$library" ] || [ "$source" -nt "$library" ]; then
    cc=$(command -v cc || command -v gcc || command -v clang) || { echo "pool-check.sh: no C compiler" >&2; exit 69; }
    "$cc" -shared -fPIC -O2 -Wall -Wextra -o "$library" "$source" -ldl -lpthread || exit 69
fi

# The library and the report in a directory every user can reach: some tests run esctl as
# another user (nobody), and the checkout may sit under a directory only its owner can search.
shared=$(mktemp -d /tmp/pool-check.XXXXXX) || exit 69
trap 'rm -rf "$shared"' EXIT
chmod 0755 "$shared"
cp "$library" "$shared/libpoolcheck.so" && chmod 0644 "$shared/libpoolcheck.so" || exit 69
report="$shared/report.txt"
: >"$report"
chmod 0666 "$report"
status=0
ESTEST_POOL_REPORT="$report" \
    ESTEST_POOL_PROCESSES="${ESTEST_POOL_PROCESSES:-swift-lmdb-eventstorePackageTests.xctest,esctl,torture-writer}" \
    LD_PRELOAD="$shared/libpoolcheck.so${LD_PRELOAD:+:$LD_PRELOAD}" \
    "$@" || status=$?
cp "$report" "$dir/report.txt" 2>/dev/null

symbolizer=$(command -v llvm-symbolizer || ls "$(dirname "$(command -v swift)")/llvm-symbolizer" 2>/dev/null)
demangle() { if command -v swift-demangle >/dev/null; then swift-demangle --simplified; else cat; fi; }
# Prints a report with each "#N OBJECT +OFFSET" line symbolized (function, file and line).
symbolize() {
    while IFS= read -r line; do
        if [[ $line =~ ^\ +#([0-9]+)\ +([^ ]+)\ \+(0x[0-9a-f]+) ]] && [ -n "$symbolizer" ]; then
            where=$("$symbolizer" --obj="${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}" 2>/dev/null | head -2 | paste -sd' ' | demangle)
            printf '    #%-2s %s\n' "${BASH_REMATCH[1]}" "${where:-${BASH_REMATCH[2]} +${BASH_REMATCH[3]}}"
        else
            printf '%s\n' "$line"
        fi
    done <"$1"
}

if [ -n "${ESTEST_POOL_INFO:-}" ] && [ -s "$ESTEST_POOL_INFO" ]; then
    symbolize "$ESTEST_POOL_INFO" >"$ESTEST_POOL_INFO.txt"
    echo "pool-check: the long jobs' stacks are in $ESTEST_POOL_INFO.txt" >&2
fi
if [ -s "$report" ]; then
    findings=$(grep -c '^pool-check:' "$report")
    echo >&2
    echo "pool-check: $findings finding(s): a task held a thread of Swift's cooperative pool while it slept in the kernel." >&2
    echo "Each one starves the other tasks of its priority (timers, timeouts, shutdowns) on a machine with few cores." >&2
    echo >&2
    symbolize "$report" >&2
    [ "$status" -eq 0 ] && status=1
fi
exit "$status"
