#!/usr/bin/env bash
# Hosts of our own on this one machine: a PostgreSQL primary, its streaming standby and a few
# application hosts, each in a network namespace of its own, joined by a bridge, on private
# addresses that exist only inside the namespaces (nothing reaches the machine's own network).
#
#   scripts/cluster.sh up [--apps N] [--async]   start pg1 (primary, 10.77.0.11), pg2 (standby,
#                                                10.77.0.12, synchronous unless --async) and app1..N
#                                                (10.77.0.21..., N from 1 to 8, default 3)
#   scripts/cluster.sh url                       the store URL naming both servers
#   scripts/cluster.sh run HOST COMMAND...       run a command on a host (app1, pg1, ...)
#   scripts/cluster.sh kill-primary              SIGKILL to the postmaster of the server that is primary
#   scripts/cluster.sh promote                   promote the standby (waits until it takes writes)
#   scripts/cluster.sh rejoin                    make the stopped server a standby of the primary again
#                                                (its data copied anew with pg_basebackup)
#   scripts/cluster.sh partition HOST [OTHER]    cut HOST off from OTHER (default: from every host)
#   scripts/cluster.sh heal HOST                 undo every cut of HOST
#   scripts/cluster.sh slow HOST [SPEC]          slow HOST's link: netem delay SPEC (default 100ms)
#                                                where the kernel has netem, else a 256 kbit/s rate
#   scripts/cluster.sh unslow HOST
#   scripts/cluster.sh status                    the hosts, each server's role
#   scripts/cluster.sh down                      stop everything and remove the namespaces
#   scripts/cluster.sh selftest                  up, appends with esctl from two app hosts over the
#                                                URL through a failover, a partition and a slow
#                                                link, checks, then down (even on failure)
#
# The state (data directories, logs) is in $ES_CLUSTER_DIR (default /tmp/es-cluster). Needs root
# (namespaces); installs postgresql and iproute2 from Debian when missing. A cut points each
# side's neighbour entry for the other at a hardware address no host has (no packet filter is
# needed, and this kernel has none), so the packets vanish on the bridge: connections time out
# rather than being refused, as in a real partition.
#
# Exits 0 on success, 64 on a usage error, 69 when something it needs is missing, 1 when a step
# or a selftest check fails.
set -euo pipefail

DIR=${ES_CLUSTER_DIR:-/tmp/es-cluster}
NET=es-net
SUBNET=10.77.0
PORT=5432

die() { echo "cluster: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 64; }

[ "$(id -u)" = 0 ] || { echo "cluster: network namespaces need root" >&2; exit 69; }
if ! command -v ip >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
fi
. "$(dirname "$0")/lib/postgres.sh"

address() {
    case "$1" in
        pg1) echo "$SUBNET.11" ;;
        pg2) echo "$SUBNET.12" ;;
        app[1-8]) echo "$SUBNET.$((20 + ${1#app}))" ;;
        *) die "no host '$1' (pg1, pg2, app1 to app8)" ;;
    esac
}
hosts() { cat "$DIR/hosts" 2>/dev/null || true; }
on() { local host=$1; shift; ip netns exec "es-$host" "$@"; }
# Runs a PostgreSQL program on a host as the cluster's owner, from / (see as_owner).
on_as_owner() { local host=$1; shift; (cd / && ip netns exec "es-$host" runuser -u postgres -- "$@"); }
url() { echo "postgres://postgres@$SUBNET.11:$PORT,$SUBNET.12:$PORT/postgres"; }

# Adds a host: a namespace, a veth pair whose one end is its eth0 and the other on the bridge.
add_host() {
    local host=$1
    ip netns add "es-$host"
    ip link add "v-$host" type veth peer name eth0 netns "es-$host"
    ip link set "v-$host" netns "$NET"
    ip netns exec "$NET" ip link set "v-$host" master br0
    ip netns exec "$NET" ip link set "v-$host" up
    on "$host" ip addr add "$(address "$host")/24" dev eth0
    on "$host" ip link set eth0 up
    on "$host" ip link set lo up
    echo "$host" >>"$DIR/hosts"
}

start_server() {
    local host=$1 settings=$2
    mkdir -p "$DIR/$host-socket"
    chown postgres: "$DIR/$host-socket"
    on_as_owner "$host" "$PG_CTL" -D "$DIR/$host" -l "$DIR/$host.log" -w -t 60 \
        -o "-c listen_addresses=$(address "$host") -p $PORT -k $DIR/$host-socket -c fsync=off -c full_page_writes=off $settings" \
        start >/dev/null || { cat "$DIR/$host.log" >&2; die "the server on $host did not start"; }
}

up() {
    local apps=3 sync="-c synchronous_standby_names='*'"
    while [ $# -gt 0 ]; do
        case "$1" in
            --apps) apps=${2:-}; shift 2 ;;
            --async) sync=""; shift ;;
            *) usage ;;
        esac
    done
    [[ "$apps" =~ ^[1-8]$ ]] || die "--apps takes 1 to 8"
    [ -d "$DIR" ] && die "a cluster is up in $DIR: run 'scripts/cluster.sh down' first"
    ip netns list | grep -q "^$NET\b" && die "the namespace $NET exists (another cluster is up?): run 'scripts/cluster.sh down' first"
    mkdir -p "$DIR"
    chmod 0755 "$DIR"
    chown postgres: "$DIR"
    : >"$DIR/hosts"
    ip netns add "$NET"
    ip netns exec "$NET" ip link add br0 type bridge
    ip netns exec "$NET" ip link set br0 up
    for host in pg1 pg2 $(seq -f 'app%g' 1 "$apps"); do add_host "$host"; done

    as_owner "$INITDB" -D "$DIR/pg1" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >"$DIR/initdb.log" 2>&1 \
        || { cat "$DIR/initdb.log" >&2; die "initdb failed"; }
    printf 'host all all %s.0/24 trust\nhost replication all %s.0/24 trust\n' "$SUBNET" "$SUBNET" >>"$DIR/pg1/pg_hba.conf"
    # Both servers get the same settings: a standby ignores synchronous_standby_names until it
    # is promoted, and then waits for its own standby (rejoin) before it acknowledges a commit.
    echo "$sync" >"$DIR/settings"
    start_server pg1 "$sync"
    on_as_owner pg2 "$PG_BASEBACKUP" -h "$SUBNET.11" -p "$PORT" -U postgres -D "$DIR/pg2" -R -X stream --no-sync \
        >"$DIR/basebackup.log" 2>&1 || { cat "$DIR/basebackup.log" >&2; die "pg_basebackup failed"; }
    start_server pg2 "$sync"
    echo "cluster: up in $DIR; the store URL: $(url)" >&2
}

# Copies the primary's data to the server that is stopped and starts it as a standby.
rejoin() {
    local primary host
    primary=$(primary) || die "no primary is running"
    host=$( [ "$primary" = pg1 ] && echo pg2 || echo pg1 )
    runs "$host" && die "$host still runs: kill it first"
    # A killed postmaster may leave backends behind for a moment, and always its shared memory.
    as_owner "$PG_CTL" -D "$DIR/$host" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "${DIR:?}/$host"
    on_as_owner "$host" "$PG_BASEBACKUP" -h "$(address "$primary")" -p "$PORT" -U postgres -D "$DIR/$host" -R -X stream --no-sync \
        >"$DIR/basebackup.log" 2>&1 || { cat "$DIR/basebackup.log" >&2; die "pg_basebackup from $primary failed"; }
    start_server "$host" "$(cat "$DIR/settings")"
    echo "cluster: $host is a standby of $primary again" >&2
}

# Whether the postmaster of a server runs: its pid alive and not a zombie (a killed postmaster
# is reparented to this machine's first process, which may never reap it).
runs() {
    local pid stat
    [ -f "$DIR/$1/postmaster.pid" ] || return 1
    pid=$(head -1 "$DIR/$1/postmaster.pid" 2>/dev/null) || return 1
    # Read once: a process reaped between a test and a read must not count as running.
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    [ -n "$stat" ] || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

# The server that is primary now: the one whose postmaster runs and is not in recovery.
primary() {
    local host
    for host in pg1 pg2; do
        [ -f "$DIR/$host/standby.signal" ] && continue
        runs "$host" && { echo "$host"; return 0; }
    done
    return 1
}

kill_primary() {
    local host
    host=$(primary) || die "no primary is running"
    kill -9 "$(head -1 "$DIR/$host/postmaster.pid")"
    # Gone (or a zombie) within 10 s: what follows (promote, rejoin) asks which server runs.
    local waited=0
    while runs "$host" && [ "$waited" -lt 100 ]; do sleep 0.1; waited=$((waited + 1)); done
    runs "$host" && die "the primary on $host still runs 10 s after SIGKILL"
    echo "cluster: killed the primary on $host" >&2
}

promote() {
    local host
    for host in pg1 pg2; do
        if [ -f "$DIR/$host/standby.signal" ]; then
            on_as_owner "$host" "$PG_CTL" -D "$DIR/$host" -w -t 60 promote >/dev/null || die "promoting $host failed"
            echo "cluster: promoted $host" >&2
            return 0
        fi
    done
    die "no standby to promote"
}

# A hardware address no host has: frames sent to it are dropped by the bridge, silently.
NOWHERE=02:00:00:00:de:ad
cut_off() {
    local host=$1 other=$2
    on "$host" ip neigh replace "$(address "$other")" lladdr "$NOWHERE" dev eth0 nud permanent
    on "$other" ip neigh replace "$(address "$host")" lladdr "$NOWHERE" dev eth0 nud permanent
}

partition() {
    local host=${1:-} other=${2:-}
    [ -n "$host" ] || usage
    address "$host" >/dev/null
    if [ -n "$other" ]; then
        cut_off "$host" "$other"
    else
        for other in $(hosts); do [ "$other" = "$host" ] || cut_off "$host" "$other"; done
    fi
    echo "cluster: cut $host off from ${other:-every host}" >&2
}

heal() {
    local host=${1:-} other
    [ -n "$host" ] || usage
    for other in $(hosts); do
        [ "$other" = "$host" ] && continue
        on "$host" ip neigh del "$(address "$other")" dev eth0 2>/dev/null || true
        on "$other" ip neigh del "$(address "$host")" dev eth0 2>/dev/null || true
    done
    echo "cluster: healed $host" >&2
}

slow() {
    local host=${1:-} spec=${2:-100ms}
    [ -n "$host" ] || usage
    if on "$host" tc qdisc replace dev eth0 root netem delay "$spec" 2>/dev/null; then
        echo "cluster: $host's link delays $spec" >&2
    else
        # This kernel has no netem: a slow link by rate instead (a full queue delays too).
        on "$host" tc qdisc replace dev eth0 root tbf rate 256kbit burst 16kbit latency 2s
        echo "cluster: $host's link is limited to 256 kbit/s (no netem in this kernel)" >&2
    fi
}

unslow() {
    [ -n "${1:-}" ] || usage
    on "$1" tc qdisc del dev eth0 root 2>/dev/null || true
}

status() {
    [ -d "$DIR" ] || { echo "cluster: down"; return 0; }
    echo "hosts: $(hosts | tr '\n' ' ')"
    local host
    for host in pg1 pg2; do
        local role=stopped
        if runs "$host"; then
            role=$( [ -f "$DIR/$host/standby.signal" ] && echo standby || echo primary )
        fi
        echo "$host $(address "$host") $role"
    done
    echo "url: $(url)"
}

down() {
    local host pid
    for host in pg1 pg2; do
        [ -f "$DIR/$host/postmaster.pid" ] && as_owner "$PG_CTL" -D "$DIR/$host" -m immediate stop >/dev/null 2>&1 || true
    done
    for host in $(hosts); do
        for pid in $(ip netns pids "es-$host" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns del "es-$host" 2>/dev/null || true
    done
    ip netns del "$NET" 2>/dev/null || true
    rm -rf "$DIR"
}

# The selftest: esctl on two application hosts, over the URL naming both servers.
check() { "$@" || die "selftest: failed: $*"; }
selftest() {
    local esctl=${ESCTL:-}
    if [ -z "$esctl" ]; then
        esctl="$(cd "$(dirname "$0")/.." && swift build --show-bin-path)/esctl"
    fi
    [ -x "$esctl" ] || { echo "cluster: no esctl at $esctl (build it, or set ESCTL)" >&2; exit 69; }
    [ -d "$DIR" ] && die "a cluster is up in $DIR: run 'scripts/cluster.sh down' first"
    trap down EXIT
    up --apps 2
    local db n
    db=$(url)
    append() { on "$1" timeout 90 "$esctl" --db "$db" append selftest Placed --data "{\"n\":$2}" --id "00000000-0000-7000-8000-$(printf '%012d' "$2")" >/dev/null; }
    for n in 1 2 3; do check append app1 "$n"; done
    # A failover: the primary killed, the standby promoted; the other host's next append finds it.
    kill_primary
    promote
    rejoin
    for n in 4 5 6; do check append app2 "$n"; done
    # A partition: app2 cut off from the new primary fails, saying so, within the probes' bounds;
    # healed, it appends again.
    partition app2 pg2
    local status=0
    append app2 7 2>"$DIR/partitioned.err" || status=$?
    [ "$status" = 69 ] || { cat "$DIR/partitioned.err" >&2; die "selftest: an append cut off from the primary exited $status, not 69"; }
    heal app2
    check append app2 7
    # A slow link still carries appends.
    slow app1
    check append app1 8
    unslow app1
    # Everything acknowledged is there once, in order, read from either host.
    local versions
    versions=$(on app1 "$esctl" --db "$db" read selftest --json | python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["version"]) for l in sys.stdin))')
    [ "$versions" = "1 2 3 4 5 6 7 8" ] || die "selftest: the stream holds versions '$versions', not 1 to 8"
    echo "cluster: selftest passed (3 appends, a failover and a rejoin, 3 appends, a partition refused with 69 and healed, a slow link, 8 events in order)" >&2
}

command=${1:-}
[ -n "$command" ] || usage
shift
case "$command" in
    up) up "$@" ;;
    url) url ;;
    run) [ $# -ge 2 ] || usage; host=$1; shift; address "$host" >/dev/null; on "$host" "$@" ;;
    kill-primary) kill_primary ;;
    promote) promote ;;
    rejoin) rejoin ;;
    partition) partition "$@" ;;
    heal) heal "$@" ;;
    slow) slow "$@" ;;
    unslow) unslow "$@" ;;
    status) status ;;
    down) down ;;
    selftest) selftest ;;
    *) usage ;;
esac
