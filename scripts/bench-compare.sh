#!/usr/bin/env bash
# Before and after, side by side: builds esbench at a base commit (in a git worktree under
# .build-baseline/) and at the working tree, runs the two alternately, and prints each figure's
# values and the ratio of the medians (after / before). Interleaving the runs is what makes the
# ratio fair on a machine whose speed drifts.
#
# Usage: scripts/bench-compare.sh BASE [--rounds N] [esbench options, e.g. --scenarios s1,s3,s6]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/bench-compare.sh BASE [--rounds N] [esbench options]" >&2; exit 64; }
base=$1; shift
rounds=3
if [ "${1:-}" = "--rounds" ]; then rounds=$2; shift 2; fi
top=$(cd "$(dirname "$0")/.." && pwd)
rev=$(git -C "$top" rev-parse --short "$base")
tree="$top/.build-baseline/$rev"
if [ ! -d "$tree" ]; then
  mkdir -p "$top/.build-baseline"
  git -C "$top" worktree add --detach "$tree" "$rev" >&2
fi
build() {  # $1: the Benchmarks directory; prints the esbench path
  rm -f "$1/.build/release.yaml"
  # The benchmark's own module always rebuilt: see scripts/bench.sh.
  rm -rf "$(swift build -c release --show-bin-path --package-path "$1")/esbench.build"
  swift build -c release --product esbench --package-path "$1" >&2
  echo "$(swift build -c release --show-bin-path --package-path "$1")/esbench"
}
"$top/scripts/bench.sh" --help >/dev/null  # installs what the benchmark needs
before=$(build "$tree/Benchmarks")
after=$(build "$top/Benchmarks")
out=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
  echo "round $round of $rounds: before ($rev)..." >&2
  "$before" --json "$@" > "$out/before-$round.json"
  echo "round $round of $rounds: after (working tree)..." >&2
  "$after" --json "$@" > "$out/after-$round.json"
done
python3 - "$out" "$rounds" "$rev" <<'PY'
import json, statistics, sys
out, rounds, rev = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(kind):
    runs = [json.load(open(f"{out}/{kind}-{r}.json")) for r in range(1, rounds + 1)]
    values = {}
    for run in runs:
        for row in run["rows"]:
            key = (row["scenario"], row["contender"], row["metric"], row["unit"])
            # A figure a run could not take (PostgreSQL's, without a cluster) is null: left out.
            if row["value"] is not None:
                values.setdefault(key, []).append(row["value"])
    return values
before, after = load("before"), load("after")
print(f"before: {rev}; after: the working tree; {rounds} interleaved rounds; medians")
print(f"| scenario | contender | metric | before | after | after / before |")
print(f"|---|---|---|---|---|---|")
fmt = lambda v: f"{v:,.0f}" if v >= 1000 else f"{v:.3f}"
for key in before:
    if key not in after or not before[key] or not after[key]: continue
    b, a = statistics.median(before[key]), statistics.median(after[key])
    ratio = f"{a / b:.3f}" if b else "-"
    print(f"| {key[0]} | {key[1]} | {key[2]} ({key[3]}) | {fmt(b)} | {fmt(a)} | {ratio} |")
PY
