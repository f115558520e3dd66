#!/usr/bin/env bash
# Builds the DocC documentation of the library's modules into .build/docs/MODULE (static
# hosting: open .build/docs/EventStore/index.html through a web server, for example
# `python3 -m http.server -d .build/docs`). Uses the toolchain's own `docc`, so the package
# needs no documentation plugin (and its users do not resolve one).
# Usage: scripts/docs.sh [--warnings-as-errors]
set -euo pipefail
cd "$(dirname "$0")/.."
modules=(EventStore EventStoreCore EventStorePostgres Projections Commands ConsumerGroups AppModules HTTPServer GRPCServer EsctlCommands EventStoreTesting)
strict=()
[ "${1:-}" = "--warnings-as-errors" ] && strict=(--warnings-as-errors)
swift build --target EventStoreTesting --target EventStore --target EventStorePostgres --target AppModules --target HTTPServer --target GRPCServer --target EsctlCommands >&2
swift package dump-symbol-graph --minimum-access-level public >&2
graphs="$(swift build --show-bin-path)/../symbolgraph"
out=.build/docs
rm -rf "$out" .build/docs-graphs
# The module users import, EventStore, re-exports the core and the LMDB backend: its pages are
# made from both modules' symbols, merged under its name, so that they read as one API (as
# `import EventStore` gives it) and link to each other. Every other catalog, EventStoreCore's
# and EventStorePostgres' included, is made from its own module's symbols alone: a symbol link
# there must name a symbol of that module.
merge_graphs() { # OUT_DIR NAME MODULE...
  python3 - "$graphs" "$@" <<'PY'
import glob, json, os, sys
graphs, out, name, modules = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
merged, extensions = None, {}
for module in modules:
    graph = json.load(open(os.path.join(graphs, module + ".symbols.json")))
    if merged is None:
        merged = graph
        merged["module"]["name"] = name
    else:
        merged["symbols"] += graph["symbols"]
        merged["relationships"] += graph["relationships"]
    for path in glob.glob(os.path.join(graphs, module + "@*.symbols.json")):
        extended = path.split("@", 1)[1]
        graph = json.load(open(path))
        graph["module"]["name"] = name
        if extended in extensions:
            extensions[extended]["symbols"] += graph["symbols"]
            extensions[extended]["relationships"] += graph["relationships"]
        else:
            extensions[extended] = graph
json.dump(merged, open(os.path.join(out, name + ".symbols.json"), "w"))
for extended, graph in extensions.items():
    json.dump(graph, open(os.path.join(out, name + "@" + extended), "w"))
PY
}
for module in "${modules[@]}"; do
  mkdir -p ".build/docs-graphs/$module" "$out"
  if [ "$module" = EventStore ]; then
    merge_graphs ".build/docs-graphs/$module" EventStore EventStoreCore EventStoreJSON EventStoreLMDB
  else
    cp "$graphs/$module".symbols.json ".build/docs-graphs/$module/"
    cp "$graphs/$module"@*.symbols.json ".build/docs-graphs/$module/" 2>/dev/null || true
  fi
  docc convert "Sources/$module/$module.docc" \
    --fallback-display-name "$module" --fallback-bundle-identifier "eventstore.$module" \
    --additional-symbol-graph-dir ".build/docs-graphs/$module" \
    --output-path "$out/$module" --transform-for-static-hosting --hosting-base-path "$module" \
    "${strict[@]}" >&2
  echo "$out/$module" >&2
done
