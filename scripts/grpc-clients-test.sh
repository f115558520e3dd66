#!/usr/bin/env bash
# Runs other people's gRPC clients against a server of UmaDB's wire protocol (`umadb.v1.DCB` plus
# `grpc.health.v1`): UmaDB's own Python client (scripts/grpc_clients/test_umadb_client.py) and
# the eventsourcing library's own test cases through its UmaDB persistence module
# (scripts/grpc_clients/test_eventsourcing.py). Installs pinned versions of them from PyPI into
# .build/umadb-venv when missing, then runs every test in its own Python process against its own
# freshly started server on an empty temporary store (some of those tests assume an empty store),
# stops that server with SIGTERM after the test, prints a summary, and exits non-zero on any
# failure. The whole run is bounded (GRPC_CLIENTS_TIMEOUT seconds, default 600), each test too.
#   scripts/grpc-clients-test.sh umadb [FILTER...]         UmaDB's own server (from the venv's
#                                                         umadb wheel): checks the tests themselves
#   scripts/grpc-clients-test.sh esctl ESCTL [FILTER...]   ours: `ESCTL serve --grpc-port 0`, which
#                                                         must also stop with exit status 0
# FILTER: run only the tests whose id (module.Class.test) contains one of these strings.
# The server's address reaches the tests as UMADB_URI (what eventsourcing-umadb reads), so one
# test can also be run by hand against a server just started on an empty store:
#   UMADB_URI=http://127.0.0.1:PORT PYTHONPATH=scripts/grpc_clients \
#       .build/umadb-venv/bin/python -m unittest -v test_umadb_client.TestRead.test_limit
set -euo pipefail
name=grpc-clients-test.sh

usage() {
    echo "usage: scripts/$name umadb [FILTER...] | esctl ESCTL [FILTER...]" >&2
    exit 2
}
mode=${1:-}
case "$mode" in
    umadb) shift ;;
    esctl) [ -n "${2:-}" ] || usage; esctl=$2; shift 2 ;;
    *) usage ;;
esac
filters=("$@")
# A relative ESCTL path is the caller's, from before the `cd` below (a bare name is looked up
# on PATH, and stays).
case "${esctl:-}" in /* | "") ;; */*) esctl="$PWD/$esctl" ;; esac
cd "$(dirname "$0")/.."

# The venv, its pins and the functions that start and stop servers.
. scripts/grpc-servers.sh
# Installed outside the time bound below.
ensure_venv

# The whole run is bounded (this script runs again under `timeout`).
bound_run "${GRPC_CLIENTS_TIMEOUT:-600}" GRPC_CLIENTS_TIMEOUT "$mode" ${esctl:+"$esctl"} "$@"

# One test's bound: the slowest (thousands of appends in threads) takes a few seconds on UmaDB.
per_test=${GRPC_CLIENTS_TEST_TIMEOUT:-180}

work=$(mktemp -d)
server_pid=
cleanup() {
    [ -z "$server_pid" ] || stop_started_server || true
    rm -rf "$work"
}
trap cleanup EXIT
# Without these a signal would end bash without running the EXIT trap, leaving a server behind.
trap 'exit 143' TERM
trap 'exit 130' INT

# Starts a fresh server on an empty store in a new directory; sets server_pid, server_dir, url.
start_server() {
    server_dir=$(mktemp -d "$work/server.XXXXXX")
    if [ "$mode" = umadb ]; then
        start_umadb "$server_dir"
    else
        start_esctl "$esctl" "$server_dir"
    fi
}

# Stops the server started last (see stop_server in scripts/grpc-servers.sh).
stop_started_server() {
    local pid=$server_pid
    server_pid=
    stop_server "$mode" "$pid" "$server_dir"
}

export PYTHONPATH="$PWD/scripts/grpc_clients"
# No __pycache__ beside the test modules in the work tree.
export PYTHONDONTWRITEBYTECODE=1
# The test ids, listed by unittest's own loader, so that a new test needs no change here.
if ! "$py" - >"$work/ids" <<'EOF'; then
import importlib
import unittest

def ids(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from ids(item)
        else:
            yield item.id()

for name in ("test_umadb_client", "test_eventsourcing"):
    # Imported here rather than by the loader, which would turn an import error into a test.
    module = importlib.import_module(name)
    for test_id in ids(unittest.defaultTestLoader.loadTestsFromModule(module)):
        print(test_id)
EOF
    echo "$name: FAILED: the test modules did not load (see above)" >&2
    exit 1
fi
mapfile -t ids <"$work/ids"
if [ "${#filters[@]}" -gt 0 ]; then
    selected=()
    for id in "${ids[@]}"; do
        for filter in "${filters[@]}"; do
            case "$id" in *"$filter"*) selected+=("$id"); break ;; esac
        done
    done
    ids=("${selected[@]}")
fi
if [ "${#ids[@]}" -eq 0 ]; then
    echo "$name: FAILED: no test selected" >&2
    exit 1
fi

started=$SECONDS
passed=0 failed=0 skipped=0
failures=() skips=()
for id in "${ids[@]}"; do
    start_server
    test_log="$work/${id}.log"
    status=0 stopped=0
    # PERSISTENCE_MODULE: what the eventsourcing application tests construct their factory from.
    # --foreground keeps the test in this process group, where the whole run's bound reaches it.
    UMADB_URI=$url PERSISTENCE_MODULE=eventsourcing_umadb \
        timeout --foreground -k 5 "$per_test" "$py" -m unittest -v "$id" </dev/null >"$test_log" 2>&1 || status=$?
    [ "$status" -eq 124 ] && echo "(the test did not end within $per_test s: stopped)" >>"$test_log"
    stop_started_server 2>"$work/stop.err" || stopped=1
    if [ "$status" -ne 0 ] || [ "$stopped" -ne 0 ]; then
        failed=$((failed + 1))
        failures+=("$id")
        echo "FAIL  $id" >&2
        [ "$status" -eq 0 ] || sed 's/^/      /' "$test_log" | tail -n 60 >&2
        sed 's/^/      /' "$work/stop.err" >&2
    elif grep -q "^OK (skipped=" "$test_log"; then
        skipped=$((skipped + 1))
        # unittest prints the reason as a Python literal: in single quotes, or double ones.
        reason=$(sed -n "s/^.* \.\.\. skipped [\"']\(.*\)[\"']$/\1/p" "$test_log" | head -n 1)
        skips+=("$id: $reason")
        echo "skip  $id: $reason" >&2
    else
        passed=$((passed + 1))
        echo "ok    $id" >&2
    fi
done

echo "$name: $mode server, ${#ids[@]} tests, each on a fresh server, in $((SECONDS - started)) s" >&2
for failure in "${failures[@]}"; do echo "  failed: $failure" >&2; done
for skip in "${skips[@]}"; do echo "  skipped: $skip" >&2; done
echo "grpc-clients: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
