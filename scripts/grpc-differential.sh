#!/usr/bin/env bash
# The differential test of our gRPC face against UmaDB's own server: for each seed, starts ours
# (`ESCTL serve --port 0 --grpc-port 0` on a store it initialises) and UmaDB 0.7.8's (the `umadb`
# wheel's server, from .build/umadb-venv) on fresh temporary stores and free loopback ports,
# runs scripts/grpc_clients/differential.py against both (a seeded random mix of appends,
# conditional appends, conflicts, retries, tracking, reads, heads and subscriptions through
# UmaDB's own Python client, each answer compared; the differences on purpose checked by name:
# see that file's docstring), then stops both with SIGTERM (ours must exit 0). Prints each
# seed's outcome, the first difference in full, and exits non-zero on any difference.
#   scripts/grpc-differential.sh ESCTL                          seeds 1, 2 and 3, 300 operations each
#   scripts/grpc-differential.sh ESCTL SEED [COUNT [OPTION...]] that seed (COUNT: 300), OPTIONs
#                                                               to differential.py (--avoid CASE, -v)
# The whole run is bounded (GRPC_DIFFERENTIAL_TIMEOUT seconds, default 300), each seed's run too
# (GRPC_DIFFERENTIAL_RUN_TIMEOUT, default 120), each call within it (30 s). Installs the venv as
# scripts/grpc-clients-test.sh does when it is missing (scripts/grpc-servers.sh).
set -euo pipefail
name=grpc-differential.sh

usage() {
    echo "usage: scripts/$name ESCTL [SEED [COUNT [DIFFERENTIAL OPTION...]]]" >&2
    exit 2
}
[ -n "${1:-}" ] || usage
esctl=$1
seeds=(1 2 3)
count=300
if [ -n "${2:-}" ]; then
    case "$2" in *[!0-9]*) usage ;; esac
    seeds=("$2")
fi
if [ -n "${3:-}" ]; then
    case "$3" in *[!0-9]*) usage ;; esac
    count=$3
fi
options=("${@:4}")
# A relative ESCTL path is the caller's, from before the `cd` below (a bare name is looked up
# on PATH, and stays).
case "$esctl" in /*) ;; */*) esctl="$PWD/$esctl" ;; esac
cd "$(dirname "$0")/.."

. scripts/grpc-servers.sh
ensure_venv
bound_run "${GRPC_DIFFERENTIAL_TIMEOUT:-300}" GRPC_DIFFERENTIAL_TIMEOUT "$esctl" "${@:2}"

per_run=${GRPC_DIFFERENTIAL_RUN_TIMEOUT:-120}

work=$(mktemp -d)
ours_pid= umadb_pid=
# Stops whichever server is still running; non-zero when ours did not exit 0.
stop_servers() {
    local pid status=0
    if [ -n "$ours_pid" ]; then
        pid=$ours_pid
        ours_pid=
        stop_server esctl "$pid" "$ours_dir" || status=1
    fi
    if [ -n "$umadb_pid" ]; then
        pid=$umadb_pid
        umadb_pid=
        stop_server umadb "$pid" "$umadb_dir" || status=1
    fi
    return "$status"
}
cleanup() {
    stop_servers || true
    rm -rf "$work"
}
trap cleanup EXIT
# Without these a signal would end bash without running the EXIT trap, leaving servers behind.
trap 'exit 143' TERM
trap 'exit 130' INT

export PYTHONDONTWRITEBYTECODE=1
started=$SECONDS
failed=()
for seed in "${seeds[@]}"; do
    ours_dir=$(mktemp -d "$work/ours.XXXXXX")
    umadb_dir=$(mktemp -d "$work/umadb.XXXXXX")
    start_esctl "$esctl" "$ours_dir"
    ours_pid=$server_pid ours_url=$url
    start_umadb "$umadb_dir"
    umadb_pid=$server_pid umadb_url=$url
    status=0
    # --foreground keeps the test in this process group, where the whole run's bound reaches it.
    timeout --foreground -k 5 "$per_run" "$py" scripts/grpc_clients/differential.py "$ours_url" "$umadb_url" \
        --seed "$seed" --count "$count" ${options[@]+"${options[@]}"} </dev/null || status=$?
    [ "$status" -ne 124 ] || echo "$name: seed $seed: the run did not end within $per_run s: stopped" >&2
    # A server that ended during the run (UmaDB 0.7.8 crashes on some appends) says why here.
    running "$umadb_pid" || { echo "$name: UmaDB's server ended during the run:" >&2; tail -n 20 "$umadb_dir/serve.err" >&2; }
    running "$ours_pid" || { echo "$name: our server ended during the run:" >&2; tail -n 20 "$ours_dir/serve.err" >&2; }
    stop_servers || status=1
    [ "$status" -eq 0 ] || failed+=("$seed")
done

echo "$name: ${#seeds[@]} seeds of $count operations, in $((SECONDS - started)) s" >&2
if [ "${#failed[@]}" -gt 0 ]; then
    echo "grpc-differential: FAILED for seeds ${failed[*]} (replay one: scripts/$name ESCTL SEED $count)"
    exit 1
fi
echo "grpc-differential: ${#seeds[@]} seeds agreed"
