#!/usr/bin/env bash
# Runs a command (the test suite) and fails it, with what it was doing, when it prints nothing for
# too long: a test that awaits something that never comes hangs the run without a word, and CI
# would stop it only at its own time limit, with no trace of where it stood.
#
#   scripts/hang-check.sh [--quiet] [--keep FILE] SECONDS COMMAND [ARGUMENT...]
#
# The command's standard output and error are passed through (merged, in order, line-buffered)
# and kept in a log. When nothing new has been printed for SECONDS, the script prints the tests
# that started and never ended (from Swift Testing's "◇ Test ... started" lines, with a display
# name or a function's), the stack of every thread of each test process still running (gdb, when
# installed; installed with apt-get when missing and running as root), then kills the command and
# everything it started and exits with 124.
# Otherwise it exits with the command's status.
#
# --quiet      pass through everything but the lines of tests that start and pass and the
#              servers' info-level log lines (failures, warnings, findings and the summary stay):
#              the suite prints some 400 KB of them, which buries what matters in a CI log
# --keep FILE  keep the whole output in FILE (otherwise it is removed at the end); a relative
#              FILE, like the command, is taken from the repository's root
set -uo pipefail
cd "$(dirname "$0")/.."

usage="usage: scripts/hang-check.sh [--quiet] [--keep FILE] SECONDS COMMAND [ARGUMENT...]"
quiet=0
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quiet) quiet=1; shift ;;
        --keep) [ $# -ge 2 ] || { echo "$usage" >&2; exit 64; }; keep=$2; shift 2 ;;
        *) break ;;
    esac
done
limit=${1:?$usage}
shift
[[ $limit =~ ^[0-9]+$ ]] && [ "$limit" -gt 0 ] || { echo "hang-check.sh: SECONDS must be a positive whole number" >&2; exit 64; }
[ $# -gt 0 ] || { echo "$usage" >&2; exit 64; }

if [ -n "$keep" ]; then
    mkdir -p "$(dirname "$keep")" && : >"$keep" || { echo "hang-check.sh: cannot write $keep" >&2; exit 73; }
    log=$keep
    verdict=$(mktemp /tmp/hang-check.XXXXXX) && rm -f "$verdict" || exit 69
    trap 'rm -f "$verdict"' EXIT
else
    log=$(mktemp /tmp/hang-check.XXXXXX) || exit 69
    verdict="$log.hung"
    trap 'rm -f "$log" "$verdict"' EXIT
fi

# The command in a process group of its own, so that a hang is ended whole (esctl children too).
# Its output line-buffered (stdbuf, inherited by every process it starts): into a file, C's
# standard output is written in 4 KiB blocks, and a hung run's last lines, the ones that say where
# it stood, would stay in a buffer that is never written.
line_buffered=()
command -v stdbuf >/dev/null && line_buffered=(stdbuf -oL -eL)
set -m
"${line_buffered[@]}" "$@" >"$log" 2>&1 &
command_pid=$!
set +m

# Passes the log through as it grows (without the passing tests' lines, with --quiet).
if [ "$quiet" = 1 ]; then
    tail -n +1 -f --pid="$command_pid" "$log" \
        | grep --line-buffered -v -E '^(◇ |✔ Test "|✔ Suite "|↳ (Testing Library|Target Platform))|^✔ (Test|Suite) [^" ]+ passed after |^[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ ]+ (trace|debug|info|notice) ' &
else
    tail -n +1 -f --pid="$command_pid" "$log" &
fi
tail_pid=$!

# The processes under $1, read from /proc (no ps needed): swift test starts the test binary in a
# process group of its own, so the group alone misses it.
descendants() {
    local stat pid rest
    for stat in /proc/[0-9]*/stat; do
        read -r rest <"$stat" 2>/dev/null || continue
        pid=${rest%% *}
        rest=${rest##*) }
        rest=${rest#* }
        if [ "${rest%% *}" = "$1" ]; then
            echo "$pid"
            descendants "$pid"
        fi
    done
}

# Stops the command and everything it started.
stop_all() {
    local signal=$1 pid
    for pid in $(descendants "$command_pid"); do kill "-$signal" "$pid" 2>/dev/null; done
    kill "-$signal" -- "-$command_pid" 2>/dev/null
}

# Prints what the hung run was doing: the tests still open and every thread's stack.
diagnose() {
    echo
    echo "hang-check: nothing printed for $limit s; the run is stopped as hung."
    echo "hang-check: tests that started and did not end:"
    python3 - "$log" <<'EOF' || true
import re, sys
open_lines = {}  # test name as printed ("display name" or function()) -> its "started" lines
# A test's name is its display name in quotes, or its function's name (no spaces) without them.
name = r'(".*?"|[^" ]+)'
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    line = line.rstrip("\n")
    m = re.match(r'^◇ Test %s started\.$' % name, line)
    if m and line != "◇ Test run started.":
        open_lines.setdefault(m.group(1), []).append(line)
        continue
    if line.startswith("◇ Test case passing ") and line.endswith(' started.'):
        # The name is the one whose ' to NAME started.' ends the line (an argument may hold ' to ').
        for test in open_lines:
            if line.endswith(' to %s started.' % test):
                open_lines[test].append(line)
                break
        continue
    # A test ends with one of these; "✘ Test ... recorded an issue" is not an end.
    m = re.match(r'^[✔✘➜] Test %s(?: with \d+ test cases?)? (?:passed|failed|was cancelled|skipped)' % name, line)
    if m:
        open_lines.pop(m.group(1), None)
for lines in open_lines.values():
    for line in lines[-3:]:
        print("    " + line)
print("    (a parameterized test's cases that pass print no end line: of its cases, the last listed is the one running)")
EOF
    # gdb only now, when it is needed (a hang is rare; CI machines start without it).
    if ! command -v gdb >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "hang-check: installing gdb for the stacks..."
        timeout 300 bash -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gdb >/dev/null 2>&1 ||
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gdb >/dev/null 2>&1; }' || true
    fi
    for pid in $(descendants "$command_pid"); do
        local name
        name=$(basename "$(readlink "/proc/$pid/exe" 2>/dev/null)") || continue
        case "$name" in *PackageTests.xctest|esctl|torture-writer) ;; *) continue ;; esac
        echo "hang-check: the threads of process $pid ($name):"
        if command -v gdb >/dev/null; then
            local stacks
            stacks=$(timeout 120 gdb -p "$pid" -batch -nx -ex "set pagination off" -ex "thread apply all bt 30" 2>&1)
            if grep -q '^Thread' <<<"$stacks"; then
                grep -E '^(Thread|#)' <<<"$stacks" | sed 's/^/    /'
            else
                echo "    (gdb could not take the stacks:)"
                tail -5 <<<"$stacks" | sed 's/^/    /'
            fi
        else
            echo "    (gdb is not installed: no stacks)"
        fi
        # Whether the process's timers can still fire: libdispatch arms a timerfd per clock in an
        # epoll set its manager thread waits on. A descriptor closed by mistake (a double close)
        # can take one of them, and then every sleep and timeout of the process waits forever
        # while its threads look idle. So: what the process holds, by kind, and what each epoll
        # set watches (its fdinfo's tfd lines name the descriptors it expects).
        echo "hang-check: the descriptors of process $pid, by kind:"
        for fd in /proc/"$pid"/fd/*; do readlink "$fd"; done 2>/dev/null |
            sed -E 's/[0-9]+/N/g' | sort | uniq -c | sort -rn | head -20 | sed 's/^/    /'
        for fd in /proc/"$pid"/fd/*; do
            [ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[eventpoll]" ] || continue
            local number=${fd##*/}
            echo "    epoll set $number watches:"
            grep '^tfd:' "/proc/$pid/fdinfo/$number" 2>/dev/null | head -20 | while read -r _ target _; do
                echo "      $target -> $(readlink "/proc/$pid/fd/$target" 2>/dev/null || echo 'closed')"
            done
        done
        # And whether those timers are armed: it_value is the time left to the next expiry,
        # (0, 0) when disarmed; a sleep whose timer is disarmed never ends, with every descriptor
        # in place (the hang of the Reentrancy test, stop 45 and again 2026-12-06, looked so).
        for fd in /proc/"$pid"/fd/*; do
            [ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[timerfd]" ] || continue
            echo "    timerfd ${fd##*/}: $(grep -E '^(clockid|ticks|settime flags|it_value|it_interval):' "/proc/$pid/fdinfo/${fd##*/}" 2>/dev/null | tr -s ' \t\n' ' ')"
        done
    done
}

# Watches the log's size; when it stops growing for $limit seconds, diagnoses and ends the run.
(
    last_size=-1
    quiet=0
    while kill -0 "$command_pid" 2>/dev/null; do
        sleep 5
        size=$(stat -c %s "$log" 2>/dev/null || echo 0)
        if [ "$size" != "$last_size" ]; then
            last_size=$size
            quiet=0
            continue
        fi
        quiet=$((quiet + 5))
        if [ "$quiet" -ge "$limit" ]; then
            diagnose >&2
            : >"$verdict"
            stop_all KILL
            exit 0
        fi
    done
) &
watch_pid=$!

# Interrupted (Ctrl-C, a CI job cancelled): the command runs in a process group of its own, which
# the terminal's signal does not reach, so it is stopped here, with all it started.
on_signal() {
    stop_all TERM
    kill "$watch_pid" "$tail_pid" 2>/dev/null
    exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

status=0
wait "$command_pid" 2>/dev/null || status=$?
kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
wait "$tail_pid" 2>/dev/null
if [ "$quiet" = 1 ]; then
    if [ -n "$keep" ]; then
        echo "hang-check: the lines of passing tests and info-level logs were not shown; the whole output is in $keep."
    else
        echo "hang-check: the lines of passing tests and info-level logs were not shown (--keep FILE keeps them)."
    fi
fi
if [ -e "$verdict" ]; then
    echo "hang-check: failed: the command printed nothing for $limit s (see above)." >&2
    exit 124
fi
exit "$status"
