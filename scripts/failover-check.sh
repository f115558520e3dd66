#!/usr/bin/env bash
# Failovers and partitions under load, checked in the manner of Jepsen (issue 41):
#
#   scripts/failover-check.sh [--rounds N] [--async] [--liveness] [--rebuilds] [ESCTL]
#
# On the hosts of scripts/cluster.sh (a primary, its standby, two application hosts), runs
# `esctl serve` on each application host over the URL naming both servers, and on each an
# appender (its own streams with expected versions, and one stream both contend for) and a
# subscriber over HTTP, a claimer (conditional appends racing the other host's for the same
# slots), a processor (appends with tracking positions), a member of a consumer group whose
# effect is an append with an id of its own, and with --rebuilds a rebuilder (one of the
# projections the servers keep live, rebuilt again and again), each through esctl
# (scripts/failover_check.py).
# Meanwhile it injects N rounds of faults (default 2),
# each: the primary killed with SIGKILL, the standby promoted, the dead server copied anew as the
# new primary's standby (rejoin), then one application host cut off from the primary for 4 s and
# healed. Afterwards the checker proves that every acknowledged append is in the log exactly
# once, at the version it expected plus one, that positions and each stream's versions have no
# gap, that every subscriber saw the log in order, that each slot was claimed once (by the claim
# told it won), that each processor reacted to each position once, that every event the group
# settled has its effect and no delivery was acknowledged twice, that every rebuild ended done
# or stopped by a fault (storeUnavailable, made again; with --rebuilds, as make test runs it),
# that the projections each
# server's live daemon kept through the faults reached the head, passed over nothing and equal
# a fold of the log (`esctl verify --deep`), that every request was answered, and that every
# appender was answered again after the last fault healed. Prints the figures (failovers
# survived, appends acknowledged, lost, the longest time an appender waited for an answer).
#
# The short run (2 rounds, under two minutes) is part of `make test`; a long run is
# `--rounds 100` (RELIABILITY.md). --async makes the standby asynchronous: the checker then
# counts the acknowledged appends a failover lost (the figure `lost`), lists what follows from
# them (positions taken again, subscribers that saw events now gone), and passes. --liveness
# also fails on a request left unanswered and on an appender not answered after the last heal
# (without it, these are the figure `stalled`: the short run in make test, on a CI machine
# shared with other jobs, reports them rather than failing by chance; the long run uses it).
# A subscriber that saw events a failover then lost always fails (the figure
# `readsLostAtFailover` counts them). --rebuilds adds the rebuilders.
# Exits 0 when the check passes, 1 when it finds a violation or a step fails, 64 on usage,
# 69 when something it needs is missing.
set -euo pipefail

ROUNDS=2
ASYNC=""
ESCTL=""
ROLES="claimer processor consumer"
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS=${2:-}; shift 2 ;;
        --async) ASYNC=--async; shift ;;
        --liveness) export FAILOVER_CHECK_LIVENESS=1; shift ;;
        --rebuilds) ROLES="$ROLES rebuilder"; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        -*) echo "failover-check: unknown option $1" >&2; exit 64 ;;
        *) ESCTL=$1; shift ;;
    esac
done
[[ "$ROUNDS" =~ ^[0-9]+$ ]] && [ "$ROUNDS" -ge 1 ] && [ "$ROUNDS" -le 1000 ] || { echo "failover-check: --rounds takes 1 to 1000" >&2; exit 64; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ -n "$ESCTL" ] || ESCTL="$(cd "$ROOT" && swift build --show-bin-path)/esctl"
[ -x "$ESCTL" ] || { echo "failover-check: no esctl at $ESCTL (build it, or pass its path)" >&2; exit 69; }
CLUSTER="$ROOT/scripts/cluster.sh"
CHECK="$ROOT/scripts/failover_check.py"
LOGS=$(mktemp -d /tmp/es-failover-check.XXXXXX)
PIDS=()

finish() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    "$CLUSTER" down >/dev/null 2>&1 || true
    if [ "${KEEP_LOGS:-}" = 1 ]; then echo "failover-check: logs kept in $LOGS" >&2; else rm -rf "$LOGS"; fi
}
trap finish EXIT

"$CLUSTER" up --apps 2 $ASYNC
# The appenders count a conflict on their own streams (an acknowledged append lost) instead of failing.
[ -z "$ASYNC" ] || export FAILOVER_CHECK_COUNT_LOSSES=1
URL=$("$CLUSTER" url)
# One load phase for every round's faults: the load ends when the rounds are over (the file
# `stop`), or at this bound.
SECONDS_OF_LOAD=$((ROUNDS * 90 + 60))

"$CLUSTER" run app1 "$ESCTL" --db "$URL" init >/dev/null
"$CLUSTER" run app1 "$ESCTL" --db "$URL" group create g --category claims --partition-by stream --partitions 2 \
    --max-tries 1000 --lease 10 >/dev/null
for app in app1 app2; do
    # At notice, the store says each look at the servers, each switch and each append made again.
    "$CLUSTER" run "$app" "$ESCTL" --log-level notice serve --db "$URL" --port 8080 --apps none >"$LOGS/serve-$app.log" 2>&1 &
    PIDS+=($!)
done
for app in app1 app2; do
    for _ in $(seq 1 100); do
        "$CLUSTER" run "$app" python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:8080/health", timeout=2)' 2>/dev/null && break
        sleep 0.2
    done
done

for app in app1 app2; do
    "$CLUSTER" run "$app" python3 "$CHECK" appender http://127.0.0.1:8080 "$app" "$SECONDS_OF_LOAD" "$LOGS/appender-$app.jsonl" \
        >"$LOGS/appender-$app.out" 2>"$LOGS/appender-$app.err" &
    PIDS+=($!)
    "$CLUSTER" run "$app" python3 "$CHECK" subscriber http://127.0.0.1:8080 "$SECONDS_OF_LOAD" "$LOGS/subscriber-$app.jsonl" \
        >"$LOGS/subscriber-$app.out" 2>"$LOGS/subscriber-$app.err" &
    PIDS+=($!)
    for role in $ROLES; do
        "$CLUSTER" run "$app" python3 "$CHECK" "$role" "$ESCTL" "$URL" "$app" "$SECONDS_OF_LOAD" "$LOGS/$role-$app.jsonl" \
            >"$LOGS/$role-$app.out" 2>"$LOGS/$role-$app.err" &
        PIDS+=($!)
    done
done

started=$(date +%s)
sleep 5
for round in $(seq 1 "$ROUNDS"); do
    "$CLUSTER" kill-primary
    sleep 1
    "$CLUSTER" promote
    "$CLUSTER" rejoin
    sleep 5
    primary=$("$CLUSTER" status | awk '$3 == "primary" { print $1 }')
    cut_app=app$(( (round % 2) + 1 ))
    "$CLUSTER" partition "$cut_app" "$primary"
    sleep 4
    "$CLUSTER" heal "$cut_app"
    date +%s.%N >"$LOGS/healed"
    sleep 5
    echo "failover-check: round $round of $ROUNDS done ($(( $(date +%s) - started )) s)" >&2
done

# Time for every load process to be answered after the last fault (the checker asks for an
# acknowledgement after it), then the load ends.
sleep 10
touch "$LOGS/stop"
status=0
for pid in "${PIDS[@]:2}"; do wait "$pid" || status=1; done
for file in "$LOGS"/*.out; do [[ "$file" == */serve-* ]] || cat "$file"; done
if [ "$status" != 0 ]; then
    echo "failover-check: a load process failed:" >&2
    tail -n 20 "$LOGS"/*.err >&2
fi
"$CLUSTER" run app1 python3 "$CHECK" check http://127.0.0.1:8080 "$LOGS" "$ESCTL" "$URL" ${ASYNC:+--count-losses} || status=1
if [ -n "$ASYNC" ]; then verdict="losses counted (\"lost\" above)"; elif [ "$status" = 0 ]; then verdict="the check passed"; else verdict="the check FAILED"; fi
echo "failover-check: $ROUNDS failovers and $ROUNDS partitions; $verdict" >&2
exit "$status"
