# Sourced (not run) by the scripts that test a live `esctl serve` (schemathesis.sh,
# console-test.sh): serves a fresh temporary store on a free loopback port, and stops it.
#
#   serve_temporary ESCTL [SERVE OPTIONS...]
#       sets work (a temporary directory, removed when the script exits), store, server_pid and
#       url (http://127.0.0.1:PORT); serve's standard error goes to $work/serve.err. Exits the
#       script when serve ends before listening or does not say where it listens within 30 s.
#   stop_served
#       sends SIGTERM and waits; sets served to serve's exit status (0 is a graceful stop).

serve_name=$(basename "$0")
server_pid=
work=$(mktemp -d)
store="$work/store"
serve_temporary_cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap serve_temporary_cleanup EXIT

serve_temporary() {
    local esctl=$1
    shift
    "$esctl" init --db "$store" >/dev/null
    "$esctl" serve --db "$store" --port 0 "$@" </dev/null 2>"$work/serve.err" &
    server_pid=$!
    url=
    for _ in $(seq 1 300); do
        url=$(sed -n 's/^[A-Za-z0-9_-]*: serving .* on \(http:\/\/[^ ]*\)$/\1/p' "$work/serve.err" | head -n 1)
        [ -n "$url" ] && return 0
        kill -0 "$server_pid" 2>/dev/null || { echo "$serve_name: esctl serve ended before listening:" >&2; cat "$work/serve.err" >&2; exit 1; }
        sleep 0.1
    done
    echo "$serve_name: esctl serve did not say where it listens within 30 s" >&2
    cat "$work/serve.err" >&2
    exit 1
}

stop_served() {
    kill -TERM "$server_pid"
    served=0
    wait "$server_pid" || served=$?
    server_pid=
}
