#!/usr/bin/env bash
# What each change cost: builds esbench at each given commit (git worktrees under
# .build-baseline/; "." is the working tree), runs the binaries in turn, round after round, and
# prints each figure's median per commit and its ratio to the first commit's. Taking the commits
# in turn within each round is what makes the ratios fair on a machine whose speed drifts.
#
# Every commit builds in Benchmarks/.build, the working tree's (scripts/bench.sh's), so the
# dependencies compile once and each commit recompiles only this project's modules; each binary
# is copied to .build-baseline/bin/ before the next build overwrites them, and used again by
# later runs (the working tree's excepted); the next scripts/bench.sh recompiles the working
# tree's. Run no other benchmark build beside it.
#
# Usage: scripts/bench-history.sh REV [REV...] [--rounds N] [-- esbench options]
#   e.g. scripts/bench-history.sh fcc588f 743a774 . --rounds 3 -- --scenarios s1,s3
set -euo pipefail
usage="usage: scripts/bench-history.sh REV [REV...] [--rounds N] [-- esbench options]"
revs=()
rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) [ $# -ge 2 ] || { echo "$usage" >&2; exit 64; }; rounds=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "$usage" >&2; exit 64 ;;
    *) revs+=("$1"); shift ;;
  esac
done
[ ${#revs[@]} -ge 1 ] || { echo "$usage" >&2; exit 64; }
case $rounds in ''|*[!0-9]*|0) echo "--rounds takes a whole number from 1" >&2; exit 64 ;; esac
top=$(cd "$(dirname "$0")/.." && pwd)
scratch="$top/Benchmarks/.build"
bins="$top/.build-baseline/bin"
mkdir -p "$scratch" "$bins"
source "$top/scripts/lib/bench-deps.sh"
bench_install_deps

labels=()
binaries=()
for rev in "${revs[@]}"; do
  if [ "$rev" = . ]; then
    label="working-tree"
    package="$top/Benchmarks"
  else
    label=$(git -C "$top" rev-parse --short "$rev")
    tree="$top/.build-baseline/$label"
    [ -d "$tree" ] || git -C "$top" worktree add --detach "$tree" "$label" >&2
    package="$tree/Benchmarks"
  fi
  labels+=("$label")
  binaries+=("$bins/esbench-$label")
  # A commit's binary never changes: one built before is used again.
  if [ "$label" != working-tree ] && [ -x "$bins/esbench-$label" ]; then
    echo "esbench at $label: built before ($bins/esbench-$label)" >&2
    continue
  fi
  echo "building esbench at $label..." >&2
  # A scratch directory's plan is reused when no manifest changed, whoever wrote it: dropped, so
  # that this commit's sources are the ones planned.
  rm -f "$scratch/release.yaml"
  # The benchmark's own module always rebuilt: see scripts/bench.sh.
  # SwiftPM keeps the enabled traits in a Set whose order changes with each process's hash seed:
  # without a fixed seed every new plan recompiles the dependencies too (docs/testing.md).
  bin=$(SWIFT_DETERMINISTIC_HASHING=1 swift build -c release --show-bin-path --package-path "$package" --scratch-path "$scratch")
  rm -rf "$bin/esbench.build"
  SWIFT_DETERMINISTIC_HASHING=1 swift build -c release --product esbench --package-path "$package" --scratch-path "$scratch" >&2
  cp "$bin/esbench" "$bins/esbench-$label.partial"
  mv "$bins/esbench-$label.partial" "$bins/esbench-$label"
done
rm -f "$scratch/release.yaml"

out=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
  for i in "${!labels[@]}"; do
    echo "round $round of $rounds: ${labels[$i]}..." >&2
    "${binaries[$i]}" --json "$@" > "$out/${labels[$i]}-$round.json"
  done
done
python3 - "$out" "$rounds" "${labels[@]}" <<'PY'
import json, statistics, sys
out, rounds, labels = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(label):
    values = {}
    for r in range(1, rounds + 1):
        for row in json.load(open(f"{out}/{label}-{r}.json"))["rows"]:
            key = (row["scenario"], row["contender"], row["metric"], row["unit"])
            # A figure a run could not take (PostgreSQL's, without a cluster) is null: left out.
            if row["value"] is not None:
                values.setdefault(key, []).append(row["value"])
    return values
runs = {label: load(label) for label in labels}
first = labels[0]
print(f"{rounds} rounds, the commits in turn in each; medians; in brackets the ratio to {first}")
print("| scenario | contender | metric | " + " | ".join(labels) + " |")
print("|---|---|---|" + "---|" * len(labels))
fmt = lambda v: f"{v:,.0f}" if v >= 1000 else f"{v:.3f}"
keys = []
for label in labels:
    keys += [key for key in runs[label] if key not in keys]
for key in keys:
    cells = []
    base = statistics.median(runs[first][key]) if runs[first].get(key) else None
    for label in labels:
        if not runs[label].get(key):
            cells.append("-")
            continue
        value = statistics.median(runs[label][key])
        ratio = f" ({value / base:.2f})" if base and label != first else ""
        cells.append(fmt(value) + ratio)
    print(f"| {key[0]} | {key[1]} | {key[2]} ({key[3]}) | " + " | ".join(cells) + " |")
PY
