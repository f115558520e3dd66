#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL cluster, and stops the cluster afterwards, even
# when the command fails or is interrupted.
#
#   scripts/with-postgres.sh [--durable] COMMAND [ARGUMENT...]
#
# Installs Debian's postgresql when initdb is missing. The cluster listens on a Unix socket in a
# temporary directory only (no TCP port to collide with, nothing on the network), trusts local
# connections, and runs without fsync (a test cluster), or with PostgreSQL's durable defaults
# (fsync, synchronous_commit) with --durable, as the benchmark runs it. The command sees ESTEST_POSTGRES_URL, a postgres:// URL of the cluster's
# `postgres` database as the `postgres` user; tests make a database of their own in it.
#
# Exits with the command's status; 69 when PostgreSQL cannot be installed or started.
set -euo pipefail

SETTINGS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
if [ "${1:-}" = "--durable" ]; then
    SETTINGS=""
    shift
fi

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

find_bin() {
    if command -v "$1" >/dev/null 2>&1; then command -v "$1"; return 0; fi
    local candidate
    for candidate in /usr/lib/postgresql/*/bin/"$1"; do
        [ -x "$candidate" ] && { echo "$candidate"; return 0; }
    done
    return 1
}

if ! find_bin initdb >/dev/null || ! find_bin pg_ctl >/dev/null; then
    echo "PostgreSQL not found: installing postgresql with apt-get..." >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
INITDB=$(find_bin initdb) || { echo "with-postgres: initdb is missing after installing postgresql" >&2; exit 69; }
PG_CTL=$(find_bin pg_ctl) || { echo "with-postgres: pg_ctl is missing after installing postgresql" >&2; exit 69; }

# initdb refuses to run as root: root runs the cluster as the postgres user.
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

DIR=$(mktemp -d /tmp/es-postgres.XXXXXX)
[ "$(id -u)" = 0 ] && chown postgres: "$DIR"
chmod 0755 "$DIR"

stop() {
    as_owner "$PG_CTL" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
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
echo "with-postgres: a throwaway cluster at $DIR" >&2
status=0
"$@" || status=$?
exit "$status"
