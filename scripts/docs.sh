#!/usr/bin/env bash
# Builds the DocC documentation of the library's modules into .build/docs/MODULE (static
# hosting: open .build/docs/EventStore/index.html through a web server, for example
# `python3 -m http.server -d .build/docs`). Uses the toolchain's own `docc`, so the package
# needs no documentation plugin (and its users do not resolve one).
# Usage: scripts/docs.sh [--warnings-as-errors]
set -euo pipefail
cd "$(dirname "$0")/.."
modules=(EventStore Projections Commands ConsumerGroups EventStoreTesting)
strict=()
[ "${1:-}" = "--warnings-as-errors" ] && strict=(--warnings-as-errors)
swift build --target EventStoreTesting >&2
swift package dump-symbol-graph --minimum-access-level public >&2
graphs="$(swift build --show-bin-path)/../symbolgraph"
out=.build/docs
rm -rf "$out" .build/docs-graphs
for module in "${modules[@]}"; do
  mkdir -p ".build/docs-graphs/$module" "$out"
  cp "$graphs/$module".symbols.json ".build/docs-graphs/$module/"
  cp "$graphs/$module"@*.symbols.json ".build/docs-graphs/$module/" 2>/dev/null || true
  docc convert "Sources/$module/$module.docc" \
    --fallback-display-name "$module" --fallback-bundle-identifier "eventstore.$module" \
    --additional-symbol-graph-dir ".build/docs-graphs/$module" \
    --output-path "$out/$module" --transform-for-static-hosting --hosting-base-path "$module" \
    "${strict[@]}" >&2
  echo "$out/$module" >&2
done
