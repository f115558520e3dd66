#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL cluster, and stops the cluster afterwards, even
# when the command fails or is interrupted.
#
#   scripts/with-postgres.sh [--durable] [--no-failover-pair] COMMAND [ARGUMENT...]
#
# Installs Debian's postgresql when initdb is missing. The cluster listens on a Unix socket in a
# temporary directory only (no TCP port to collide with, nothing on the network), trusts local
# connections, and runs without fsync (a test cluster), or with PostgreSQL's durable defaults
# (fsync, synchronous_commit) with --durable, as the benchmark runs it. The command sees ESTEST_POSTGRES_URL, a postgres:// URL of the cluster's
# `postgres` database as the `postgres` user; tests make a database of their own in it.
#
# Beside it (unless --no-failover-pair), a second cluster and its synchronous streaming standby,
# for the failover tests, which kill that primary and promote the standby (the main cluster stays
# up for the other tests). The command then also sees ESTEST_POSTGRES_FAILOVER_URL, the pair's
# two servers in one URL (the primary first), and ESTEST_POSTGRES_FAILOVER_CONTROL, a script
# that takes `kill-primary` (SIGKILL to the primary's postmaster), `promote` (the standby, waiting
# until it takes writes), `pause-standby` and `resume-standby` (its WAL receiver stopped and
# continued: the primary's commits wait meanwhile) or `status`.
#
# Exits with the command's status; 69 when PostgreSQL cannot be installed or started.
set -euo pipefail

SETTINGS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
PAIR=1
while [ $# -gt 0 ]; do
    case "$1" in
        --durable) SETTINGS=""; shift ;;
        --no-failover-pair) PAIR=0; shift ;;
        *) break ;;
    esac
done

# INITDB, PG_CTL, PG_BASEBACKUP and as_owner, installing postgresql when it is missing.
. "$(dirname "$0")/lib/postgres.sh"

DIR=$(mktemp -d /tmp/es-postgres.XXXXXX)
[ "$(id -u)" = 0 ] && chown postgres: "$DIR"
chmod 0755 "$DIR"

stop() {
    as_owner "$PG_CTL" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
    for data in "$DIR/pair-primary" "$DIR/pair-standby"; do
        [ -d "$data" ] && as_owner "$PG_CTL" -D "$data" -m immediate stop >/dev/null 2>&1 || true
    done
    rm -rf "$DIR"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! as_owner "$INITDB" -D "$DIR/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >"$DIR/initdb.log" 2>&1; then
    echo "with-postgres: initdb failed:" >&2
    cat "$DIR/initdb.log" >&2
    exit 69
fi
if ! as_owner "$PG_CTL" -D "$DIR/data" -l "$DIR/log" -w -t 60 \
    -o "-k $DIR -c listen_addresses='' $SETTINGS -c max_connections=200" \
    start >/dev/null; then
    echo "with-postgres: the cluster did not start:" >&2
    cat "$DIR/log" >&2 || true
    exit 69
fi

export ESTEST_POSTGRES_URL="postgres://postgres@localhost/postgres?host=$DIR"

# The failover pair: a primary on port 5433 whose commits wait for its standby on 5434
# (synchronous_standby_names), both on the same socket directory.
if [ "$PAIR" = 1 ]; then
    if ! as_owner "$INITDB" -D "$DIR/pair-primary" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >"$DIR/pair-initdb.log" 2>&1; then
        echo "with-postgres: initdb of the failover pair failed:" >&2
        cat "$DIR/pair-initdb.log" >&2
        exit 69
    fi
    PAIR_SETTINGS="-k $DIR -c listen_addresses='' -c fsync=off -c full_page_writes=off -c max_connections=100"
    if ! as_owner "$PG_CTL" -D "$DIR/pair-primary" -l "$DIR/pair-primary.log" -w -t 60 \
        -o "-p 5433 $PAIR_SETTINGS -c synchronous_standby_names='*'" start >/dev/null; then
        echo "with-postgres: the failover pair's primary did not start:" >&2
        cat "$DIR/pair-primary.log" >&2 || true
        exit 69
    fi
    if ! as_owner "$PG_BASEBACKUP" -h "$DIR" -p 5433 -U postgres -D "$DIR/pair-standby" -R -X stream --no-sync >"$DIR/pair-basebackup.log" 2>&1 \
        || ! as_owner "$PG_CTL" -D "$DIR/pair-standby" -l "$DIR/pair-standby.log" -w -t 60 -o "-p 5434 $PAIR_SETTINGS" start >/dev/null; then
        echo "with-postgres: the failover pair's standby did not start:" >&2
        cat "$DIR/pair-basebackup.log" "$DIR/pair-standby.log" >&2 || true
        exit 69
    fi
    cat >"$DIR/failover-control" <<CONTROL
#!/usr/bin/env bash
# Controls the failover pair of scripts/with-postgres.sh: kill-primary, promote, status, and
# pause-standby / resume-standby (SIGSTOP / SIGCONT to the standby's WAL receiver, so that the
# primary's commits wait for it meanwhile).
set -euo pipefail
as_owner() { if [ "\$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "\$@"); else "\$@"; fi; }
# The standby's WAL receiver: the child of its postmaster whose title names it (read from /proc,
# which every Linux has, where procps may be missing).
walreceiver() {
    local parent found=""
    parent=\$(head -1 "$DIR/pair-standby/postmaster.pid")
    for process in /proc/[0-9]*; do
        if [ "\$(cut -d' ' -f4 "\$process/stat" 2>/dev/null)" = "\$parent" ] && grep -qa walreceiver "\$process/cmdline" 2>/dev/null; then
            found=\${process#/proc/}
        fi
    done
    [ -n "\$found" ] || { echo "failover-control: the standby has no WAL receiver" >&2; exit 69; }
    echo "\$found"
}
case "\${1:-}" in
    kill-primary) kill -9 "\$(head -1 "$DIR/pair-primary/postmaster.pid")" ;;
    promote) as_owner "$PG_CTL" -D "$DIR/pair-standby" -w -t 60 promote >/dev/null ;;
    pause-standby) kill -STOP "\$(walreceiver)" ;;
    resume-standby) kill -CONT "\$(walreceiver)" ;;
    status) as_owner "$PG_CTL" -D "$DIR/pair-primary" status || true; as_owner "$PG_CTL" -D "$DIR/pair-standby" status || true ;;
    *) echo "usage: failover-control kill-primary|promote|pause-standby|resume-standby|status" >&2; exit 64 ;;
esac
CONTROL
    chmod 0755 "$DIR/failover-control"
    export ESTEST_POSTGRES_FAILOVER_URL="postgres://postgres@:5433,:5434/postgres?host=$DIR"
    export ESTEST_POSTGRES_FAILOVER_CONTROL="$DIR/failover-control"
fi
echo "with-postgres: a throwaway cluster at $DIR" >&2
status=0
"$@" || status=$?
exit "$status"
