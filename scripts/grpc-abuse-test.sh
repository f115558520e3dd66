#!/usr/bin/env bash
# Attacks a fresh `esctl serve --grpc-port 0` over gRPC (UmaDB's `umadb.v1.DCB` and
# `grpc.health.v1`, HTTP/2 cleartext) in bounded loops, as a hostile or broken client would, and
# checks that each bad call gets a gRPC status and one sentence, writes nothing and leaves the
# server up: protobuf that does not decode and broken gRPC framing, messages over the 4 MiB
# limit, a compressed flag without an encoding, unknown fields, empty queries and queries of
# 10,000 and 10,001 items, `limit` 0 and 2^32-1, a missing or wrong API key (16 UNAUTHENTICATED
# with UmaDB's ErrorResponse AUTHENTICATION; health without one), subscribers that never read on
# 20,000 events of 10 KB and on events of 1 MB (memory bounded, others served), subscribers and
# health watchers that leave (their slots come back), 500 idle HTTP/2 connections, SIGTERM during
# appends (exit 0, every acknowledged append present after a restart).
#
#   scripts/grpc-abuse-test.sh ESCTL [--only NAME,...]
#
# ESCTL is the esctl binary to serve with (it is not built here). Speaks raw gRPC over HTTP/2 with
# the h2 library, installed (pinned) into .build/umadb-venv when missing: see
# scripts/grpc_abuse_test.py, which prints one PASS/FAIL line per check (a failure caused by the
# server is marked BUG), the figures (memory, descriptors, times, the statuses answered) and a
# summary. Exits 1 when a check fails. The whole run is bounded (GRPC_ABUSE_TIMEOUT seconds,
# default 600; it takes about two minutes). The temporary stores (about 700 MB) are removed at
# the end unless GRPC_ABUSE_KEEP is set.
set -euo pipefail
name=grpc-abuse-test.sh

if [ -z "${1:-}" ] || [ "${1#-}" != "$1" ]; then
    echo "usage: scripts/$name ESCTL [--only NAME,...]" >&2
    exit 2
fi
esctl=$1
shift
# A relative ESCTL path is the caller's, from before the `cd` below (a bare name is looked up on
# PATH, and stays).
case "$esctl" in /*) ;; */*) esctl="$PWD/$esctl" ;; esac
cd "$(dirname "$0")/.."

# The venv of scripts/grpc-clients-test.sh (which owns its other pins and may make it anew); the
# HTTP/2 library and what it needs, pinned, added to it when missing. Installed outside the time
# bound below: a slow download is not a slow server.
venv=.build/umadb-venv
py="$venv/bin/python"
pins=("h2==4.4.1" "hpack==4.2.0" "hyperframe==6.1.0")
if ! "$py" -c 'import h2, hpack, hyperframe, sys; sys.exit(h2.__version__ != "4.4.1")' 2>/dev/null; then
    echo "$name: installing ${pins[*]} into $venv" >&2
    [ -x "$py" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}" </dev/null
fi

# `timeout` signals its whole process group on expiry: the test and the servers it started.
limit=${GRPC_ABUSE_TIMEOUT:-600}
status=0
timeout -k 10 "$limit" "$py" scripts/grpc_abuse_test.py "$esctl" "$@" || status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "$name: FAILED: the run did not end within $limit s (GRPC_ABUSE_TIMEOUT)" >&2
fi
exit "$status"
