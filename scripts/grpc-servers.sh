# Sourced (not run) by scripts/grpc-clients-test.sh and scripts/grpc-differential.sh: the venv
# with UmaDB's pinned client and server (.build/umadb-venv), and starting and stopping a server
# of UmaDB's wire protocol on a fresh store: UmaDB 0.7.8's own, or ours (`ESCTL serve
# --grpc-port 0`). The caller runs from the repository's root, sets `name` (its own name, for
# messages) and runs under `set -euo pipefail`.
#   ensure_venv                    installs the pins into the venv when missing or changed
#   bound_run LIMIT VARIABLE ARGS  runs the calling script again with ARGS under `timeout LIMIT`
#                                  and exits with its status (does nothing in that second run)
#   start_umadb DIR                UmaDB's server on a store in DIR (an existing empty directory)
#   start_esctl ESCTL DIR          ours, on a store it initialises in DIR/store
#                                  both set server_pid and url (http://127.0.0.1:PORT), or exit 1
#                                  with the server's log; the log is DIR/serve.err
#   stop_server KIND PID DIR       SIGTERM, then waits up to 10 s (then SIGKILL); returns
#                                  non-zero when KIND is esctl and it did not exit with 0
#   running PID                    whether PID is running (not ended, not a zombie)

venv=.build/umadb-venv
py="$venv/bin/python"
# Pinned: the versions the tests were checked with against UmaDB 0.7.8's own server. The
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

# To be called outside a run's time bound: a slow download is not a slow server. The list of
# pins is kept in the venv, so that a change of pins installs again instead of testing old
# versions.
ensure_venv() {
    if [ ! -x "$py" ] || [ "$(cat "$venv/pins" 2>/dev/null)" != "${pins[*]}" ]; then
        echo "$name: installing UmaDB's client and server and eventsourcing into $venv" >&2
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --pre --quiet --disable-pip-version-check "${pins[@]}" </dev/null
        echo "${pins[*]}" >"$venv/pins"
    fi
}

# The whole run is bounded: the calling script runs itself again (as scripts/$name, from the
# repository's root) under `timeout`, which on expiry signals its whole process group (the
# script, its tests and its servers alike). VARIABLE names what sets LIMIT, for the message.
bound_run() {
    local limit=$1 variable=$2 status=0
    shift 2
    [ -z "${GRPC_RUN_BOUNDED:-}" ] || return 0
    GRPC_RUN_BOUNDED=1 timeout -k 10 "$limit" "scripts/$name" "$@" || status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "$name: FAILED: the run did not end within $limit s ($variable)" >&2
    fi
    exit "$status"
}

# Whether PID is still running: a server that has exited stays a zombie until `wait` reaps it,
# and `kill -0` succeeds on a zombie, so the state in /proc tells.
running() {
    local state
    state=$(sed -n 's/^.*) \(.\).*$/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# UmaDB's server says "UmaDB is listening on 127.0.0.1:0" when given port 0, not the port it
# got, so a free port is picked first; another process may take it meanwhile, so a server that
# dies before listening is started again on another port, up to three times.
start_umadb() {
    local dir=$1 port
    url=
    for _ in 1 2 3; do
        port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        "$venv/bin/umadb" --listen "127.0.0.1:$port" --db-path "$dir" </dev/null >"$dir/serve.err" 2>&1 &
        server_pid=$!
        if wait_for_line "UmaDB is listening on 127\.0\.0\.1:$port " "$dir"; then
            url="http://127.0.0.1:$port"
            return 0
        fi
        reap_server
        grep -qi "address.*in use" "$dir/serve.err" || break
    done
    echo "$name: umadb $waited:" >&2
    cat "$dir/serve.err" >&2
    exit 1
}

start_esctl() {
    local esctl=$1 dir=$2
    url=
    "$esctl" init --db "$dir/store" >/dev/null
    # Port 0 for both: no HTTP listener, gRPC on a free port that serve prints.
    "$esctl" serve --db "$dir/store" --port 0 --grpc-port 0 </dev/null 2>"$dir/serve.err" &
    server_pid=$!
    if wait_for_line "^[A-Za-z0-9_-]*: serving .* over gRPC.* on http://127\.0\.0\.1:[0-9]" "$dir"; then
        url=$(sed -n 's/^[A-Za-z0-9_-]*: serving .* over gRPC.* on \(http:\/\/127\.0\.0\.1:[0-9][0-9]*\).*$/\1/p' "$dir/serve.err" | head -n 1)
        [ -n "$url" ] && return 0
        waited="said it serves gRPC, but not on a URL this script understands"
    fi
    echo "$name: esctl serve $waited (want a line 'esctl: serving ... over gRPC ... on http://127.0.0.1:PORT'):" >&2
    cat "$dir/serve.err" >&2
    reap_server
    exit 1
}

# Waits up to 30 s for a line matching PATTERN (grep) in DIR/serve.err, the log of the server
# server_pid; stops waiting at once when the server has ended. On failure sets waited to what
# happened.
wait_for_line() {
    for _ in $(seq 1 300); do
        # -s: the server may not have created its log yet.
        grep -qs "$1" "$2/serve.err" && return 0
        running "$server_pid" || { waited="ended before it listened"; return 1; }
        sleep 0.1
    done
    waited="did not say within 30 s that it listens"
    return 1
}

# Collects the server server_pid that has ended by itself (or kills one that never said it
# listens).
reap_server() {
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}

# stop_server KIND PID DIR: sends SIGTERM and waits up to 10 s (then SIGKILL). Returns non-zero
# when esctl did not exit with 0: a graceful stop is serve's normal end. UmaDB's own exit status
# is not ours to judge.
stop_server() {
    local kind=$1 pid=$2 dir=$3 served=0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        running "$pid" || break
        sleep 0.1
    done
    if running "$pid"; then
        echo "$name: the $kind server did not stop within 10 s of SIGTERM; killed" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || served=$?
    if [ "$kind" = esctl ] && [ "$served" -ne 0 ]; then
        echo "$name: esctl serve exited $served after SIGTERM (want 0):" >&2
        tail -n 20 "$dir/serve.err" >&2
        return 1
    fi
    return 0
}
