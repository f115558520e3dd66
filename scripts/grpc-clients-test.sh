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

venv=.build/umadb-venv
py="$venv/bin/python"
# Pinned: the versions these tests were checked with against UmaDB 0.7.8's own server. The
# eventsourcing version is a pre-release (hence --pre); its extras are what its test modules
# import (msgspec, pycryptodome as Crypto, pydantic). The rest pins what those pulled in.
pins=(
    "umadb==0.7.8"
    "eventsourcing-umadb==0.4.4"
    "eventsourcing[crypto,msgspec,pydantic]==10.0.0a7"
    "msgspec==0.23.0"
    "pycryptodome==4.4.0"
    "pydantic==2.14.4"
    "pydantic_core==2.50.5"
    "annotated-types==0.8.0"
    "typing-inspection==0.4.5"
    "typing_extensions==4.16.0"
)

# Installed outside the time bound below: a slow download is not a slow server. The list of pins
# is kept in the venv, so that a change of pins installs again instead of testing old versions.
if [ ! -x "$py" ] || [ "$(cat "$venv/pins" 2>/dev/null)" != "${pins[*]}" ]; then
    echo "$name: installing UmaDB's client and server and eventsourcing into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --pre --quiet --disable-pip-version-check "${pins[@]}" </dev/null
    echo "${pins[*]}" >"$venv/pins"
fi

# The whole run is bounded: the script runs itself again under `timeout` (by its path from
# here: $0 may be relative to where it was called from), which on expiry signals its whole
# process group (this script, the test and the server alike).
limit=${GRPC_CLIENTS_TIMEOUT:-600}
if [ -z "${GRPC_CLIENTS_TEST_BOUNDED:-}" ]; then
    status=0
    GRPC_CLIENTS_TEST_BOUNDED=1 timeout -k 10 "$limit" "scripts/$name" "$mode" ${esctl:+"$esctl"} "$@" || status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "$name: FAILED: the run did not end within $limit s (GRPC_CLIENTS_TIMEOUT)" >&2
    fi
    exit "$status"
fi

# One test's bound: the slowest (thousands of appends in threads) takes a few seconds on UmaDB.
per_test=${GRPC_CLIENTS_TEST_TIMEOUT:-180}

work=$(mktemp -d)
server_pid=
cleanup() {
    [ -z "$server_pid" ] || stop_server || true
    rm -rf "$work"
}
trap cleanup EXIT
# Without these a signal would end bash without running the EXIT trap, leaving a server behind.
trap 'exit 143' TERM
trap 'exit 130' INT

# Whether PID is still running: a server that has exited stays a zombie until `wait` reaps it,
# and `kill -0` succeeds on a zombie, so the state in /proc tells.
running() {
    local state
    state=$(sed -n 's/^.*) \(.\).*$/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# Starts a fresh server on an empty store in a new directory; sets server_pid, server_dir, url.
start_server() {
    server_dir=$(mktemp -d "$work/server.XXXXXX")
    url=
    if [ "$mode" = umadb ]; then
        start_umadb
    else
        start_esctl
    fi
}

# UmaDB's server says "UmaDB is listening on 127.0.0.1:0" when given port 0, not the port it
# got, so a free port is picked first; another process may take it meanwhile, so a server that
# dies before listening is started again on another port, up to three times.
start_umadb() {
    local port
    for _ in 1 2 3; do
        port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        "$venv/bin/umadb" --listen "127.0.0.1:$port" --db-path "$server_dir" </dev/null >"$server_dir/serve.err" 2>&1 &
        server_pid=$!
        if wait_for_line "UmaDB is listening on 127\.0\.0\.1:$port "; then
            url="http://127.0.0.1:$port"
            return 0
        fi
        reap_server
        grep -qi "address.*in use" "$server_dir/serve.err" || break
    done
    echo "$name: umadb $waited:" >&2
    cat "$server_dir/serve.err" >&2
    exit 1
}

start_esctl() {
    "$esctl" init --db "$server_dir/store" >/dev/null
    # Port 0 for both: no HTTP listener, gRPC on a free port that serve prints.
    "$esctl" serve --db "$server_dir/store" --port 0 --grpc-port 0 </dev/null 2>"$server_dir/serve.err" &
    server_pid=$!
    if wait_for_line "^[A-Za-z0-9_-]*: serving .* over gRPC.* on http://127\.0\.0\.1:[0-9]"; then
        url=$(sed -n 's/^[A-Za-z0-9_-]*: serving .* over gRPC.* on \(http:\/\/127\.0\.0\.1:[0-9][0-9]*\).*$/\1/p' "$server_dir/serve.err" | head -n 1)
        [ -n "$url" ] && return 0
        waited="said it serves gRPC, but not on a URL this script understands"
    fi
    echo "$name: esctl serve $waited (want a line 'esctl: serving ... over gRPC ... on http://127.0.0.1:PORT'):" >&2
    cat "$server_dir/serve.err" >&2
    reap_server
    exit 1
}

# Waits up to 30 s for a line matching PATTERN (grep) in the server's log; stops waiting at once
# when the server has ended. On failure sets waited to what happened.
wait_for_line() {
    for _ in $(seq 1 300); do
        # -s: the server may not have created its log yet.
        grep -qs "$1" "$server_dir/serve.err" && return 0
        running "$server_pid" || { waited="ended before it listened"; return 1; }
        sleep 0.1
    done
    waited="did not say within 30 s that it listens"
    return 1
}

# Collects a server that has ended by itself (or kills one that never said it listens).
reap_server() {
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}

# Sends SIGTERM and waits up to 10 s (then SIGKILL). Returns non-zero when esctl did not exit
# with 0: a graceful stop is serve's normal end. UmaDB's own exit status is not ours to judge.
stop_server() {
    local pid=$server_pid served=0
    server_pid=
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        running "$pid" || break
        sleep 0.1
    done
    if running "$pid"; then
        echo "$name: the server did not stop within 10 s of SIGTERM; killed" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || served=$?
    if [ "$mode" = esctl ] && [ "$served" -ne 0 ]; then
        echo "$name: esctl serve exited $served after SIGTERM (want 0):" >&2
        tail -n 20 "$server_dir/serve.err" >&2
        return 1
    fi
    return 0
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
    stop_server 2>"$work/stop.err" || stopped=1
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
