# Shared by scripts/with-postgres.sh and scripts/cluster.sh (sourced, not run): finds Debian's
# PostgreSQL programs, installing postgresql with apt-get when initdb or pg_ctl is missing, and
# runs them as the postgres user when root runs the script (initdb refuses to run as root).
#
# After sourcing: INITDB, PG_CTL and PG_BASEBACKUP name the programs; postgres_bin NAME finds
# another; as_owner COMMAND... runs a command as the cluster's owner. Exits 69 when PostgreSQL
# cannot be installed.

postgres_bin() {
    if command -v "$1" >/dev/null 2>&1; then command -v "$1"; return 0; fi
    local candidate
    for candidate in /usr/lib/postgresql/*/bin/"$1"; do
        [ -x "$candidate" ] && { echo "$candidate"; return 0; }
    done
    return 1
}

# From /: the postgres user may not enter the caller's directory (and says so on every call).
as_owner() {
    if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

if ! postgres_bin initdb >/dev/null || ! postgres_bin pg_ctl >/dev/null; then
    echo "PostgreSQL not found: installing postgresql with apt-get..." >&2
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
INITDB=$(postgres_bin initdb) || { echo "$(basename "$0"): initdb is missing after installing postgresql" >&2; exit 69; }
PG_CTL=$(postgres_bin pg_ctl) || { echo "$(basename "$0"): pg_ctl is missing after installing postgresql" >&2; exit 69; }
PG_BASEBACKUP=$(postgres_bin pg_basebackup) || { echo "$(basename "$0"): pg_basebackup is missing after installing postgresql" >&2; exit 69; }
