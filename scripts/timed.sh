#!/usr/bin/env bash
# Runs a command and then says on standard error how long it took: `make test` runs each of its
# steps through it, so that CI's log (and ../shared/scripts/fresh-machine-check's) shows where a
# cold run's time goes (the build, the suite, each script) against the 45 minutes it must stay
# under. Exits with the command's status.
#
#   scripts/timed.sh COMMAND [ARGUMENT...]
set -u
[ $# -gt 0 ] || { echo "usage: scripts/timed.sh COMMAND [ARGUMENT...]" >&2; exit 64; }
started=$SECONDS
"$@"
status=$?
echo "timed: $(basename "$1")${2:+ $(basename -- "$2")} took $((SECONDS - started)) s (exit $status)" >&2
exit "$status"
