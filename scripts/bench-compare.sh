#!/usr/bin/env bash
# Before and after, side by side: esbench built at a base commit and at the working tree, run
# alternately, each figure's median and the ratio after / before. The work is
# scripts/bench-history.sh's, with two commits: the base and the working tree.
#
# Usage: scripts/bench-compare.sh BASE [--rounds N] [esbench options, e.g. --scenarios s1,s3,s6]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/bench-compare.sh BASE [--rounds N] [esbench options]" >&2; exit 64; }
base=$1; shift
rounds=3
if [ "${1:-}" = "--rounds" ]; then
  [ $# -ge 2 ] || { echo "usage: scripts/bench-compare.sh BASE [--rounds N] [esbench options]" >&2; exit 64; }
  rounds=$2; shift 2
fi
exec "$(dirname "$0")/bench-history.sh" "$base" . --rounds "$rounds" -- "$@"
