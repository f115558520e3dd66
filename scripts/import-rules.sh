#!/usr/bin/env bash
# Checks the import rules of ARCHITECTURE.md on the package's own description
# (`swift package describe --type json`) and on the sources' import lines:
#   - dependencies point down the layers (core, backends, engines, apps, faces);
#   - the core links no database; only a backend touches its database (CLMDB, PostgresNIO);
#   - the PostgreSQL backend has no path to LMDB, and the LMDB backend none to PostgreSQL;
#   - the engines ask for the core, never for a backend, and for the roles they use, not EventLog;
#   - no public protocol has more than twelve requirements, no module more than 6,500 lines;
#   - no app's name appears below the app modules.
# `make test` runs it; it prints each broken rule and exits 1, or says what it checked.
# Usage: scripts/import-rules.sh
set -euo pipefail
cd "$(dirname "$0")/.."
description="$(mktemp)"
trap 'rm -f "$description"' EXIT
swift package describe --type json >"$description"
python3 - "$description" <<'EOF'
import json, os, re, sys

package = json.load(open(sys.argv[1]))
targets = {t["name"]: t for t in package["targets"] if t["path"].startswith("Sources/")}

# The layers, from the bottom. A target may depend only on targets of a lower layer.
layers = {
    "CRC32C": 0, "CLMDB": 0, "EventStoreJSON": 0,
    "EventStoreCore": 1,
    "EventStoreLMDB": 2, "EventStorePostgres": 2,
    "EventStore": 3, "Projections": 3, "Commands": 3, "ConsumerGroups": 3,
    "EventStoreTesting": 4, "WireFormat": 4, "AppModules": 4,
    "Apps": 5,
    "HTTPServer": 6, "GRPCServer": 6,
    "EsctlCommands": 7, "AppsServer": 7,
    "AppsCLI": 8,
    "esctl": 9,
}
databases = {"CLMDB", "PostgresNIO"}
backend_of = {"CLMDB": "EventStoreLMDB", "PostgresNIO": "EventStorePostgres"}
engines = ["Projections", "Commands", "ConsumerGroups"]
# Only the seed apps' modules (and the shipped esctl, which carries them) name an app.
seed_apps = {"Apps", "AppsCLI", "AppsServer", "esctl"}
named_apps_refused = [name for name in layers if name not in seed_apps]
app_words = re.compile(r"\b(nessie|monster|workout|campground|campsite|hex ?keypad|colou?r calculator|fitness)\b", re.I)

problems = []

def direct(name):
    t = targets.get(name)
    if t is None:
        return set()
    return set(t.get("target_dependencies", [])) | set(t.get("product_dependencies", []))

def closure(name):
    seen, todo = set(), [name]
    while todo:
        for dep in direct(todo.pop()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen

for name in targets:
    if name not in layers:
        problems.append(f"{name}: not placed in a layer (add it to scripts/import-rules.sh and ARCHITECTURE.md)")
        continue
    for dep in direct(name):
        if dep in layers and layers[dep] >= layers[name]:
            problems.append(f"{name} depends on {dep}, which is not below it")
        if dep in databases and backend_of[dep] != name:
            problems.append(f"{name} depends on the database client {dep}: only {backend_of[dep]} may")

core = closure("EventStoreCore")
for forbidden in ["CLMDB", "PostgresNIO", "EventStoreLMDB", "EventStorePostgres"]:
    if forbidden in core:
        problems.append(f"the core (EventStoreCore) reaches {forbidden}")
for forbidden in ["CLMDB", "EventStoreLMDB", "EventStore"]:
    if forbidden in closure("EventStorePostgres"):
        problems.append(f"the PostgreSQL backend reaches {forbidden}: a PostgreSQL user would need LMDB")
for forbidden in ["PostgresNIO", "EventStorePostgres"]:
    if forbidden in closure("EventStoreLMDB"):
        problems.append(f"the LMDB backend reaches {forbidden}")
for engine in engines:
    for forbidden in ["CLMDB", "PostgresNIO", "EventStoreLMDB", "EventStorePostgres", "EventStore"]:
        if forbidden in closure(engine):
            problems.append(f"the engine {engine} reaches {forbidden}: engines ask for the core's protocols only")

# The sources' own import lines: a module may import a database client only in its backend, and
# no module imports one of ours that is not among its dependencies.
ours = set(layers)
for name in targets:
    allowed = closure(name)
    for root, _, files in os.walk(targets[name]["path"]):
        for file in files:
            path = os.path.join(root, file)
            if file.endswith(".swift"):
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = re.match(r"\s*(?:@\w+\s+)*import\s+(\w+)", line)
                    if not m:
                        continue
                    module = m.group(1)
                    if module in databases and name != backend_of[module]:
                        problems.append(f"{path}:{number}: imports {module}; only {backend_of[module]} may")
                    if module in ours and module not in allowed:
                        problems.append(f"{path}:{number}: imports {module}, which {name} does not depend on")
            if name in named_apps_refused and file.endswith((".swift", ".md", ".js", ".css", ".html", ".yaml")):
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    if app_words.search(line):
                        problems.append(f"{path}:{number}: names a seed app outside the seed apps' modules: {line.strip()[:100]}")

# The engines ask for the roles they use (LogReading, LogTables, ...), not for every role at once.
for engine in engines:
    for root, _, files in os.walk(targets[engine]["path"]):
        for file in files:
            if file.endswith(".swift"):
                path = os.path.join(root, file)
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    if re.search(r"\bany EventLog\b", line) and not line.strip().startswith("//"):
                        problems.append(f"{path}:{number}: the engine {engine} asks for the whole EventLog; ask for its roles")

# No public protocol of ours larger than about ten requirements (a protocol a newcomer reads in a
# minute): more than twelve is refused.
for name in targets:
    for root, _, files in os.walk(targets[name]["path"]):
        for file in files:
            if not file.endswith(".swift"):
                continue
            path = os.path.join(root, file)
            lines = open(path, encoding="utf-8").read().split("\n")
            for i, line in enumerate(lines):
                m = re.match(r"public protocol (\w+)", line)
                if not m:
                    continue
                depth, count, j = line.count("{") - line.count("}"), 0, i + 1
                while depth > 0 and j < len(lines):
                    if depth == 1 and re.match(r"\s*(?:static |mutating )?(?:func|var|init|subscript|associatedtype)\b", lines[j]):
                        count += 1
                    depth += lines[j].count("{") - lines[j].count("}")
                    j += 1
                if count > 12:
                    problems.append(f"{path}:{i + 1}: the protocol {m.group(1)} has {count} requirements; split it by role")

# No module larger than about 6,000 lines: past 6,500, split it by subject.
for name in targets:
    lines = 0
    for root, _, files in os.walk(targets[name]["path"]):
        lines += sum(sum(1 for _ in open(os.path.join(root, f), encoding="utf-8")) for f in files if f.endswith(".swift"))
    if lines > 6500:
        problems.append(f"{name} has {lines} lines of Swift; split it by subject (at most about 6,000)")

# No blocking wait on an event-loop future: the PostgreSQL backend awaits its round trips, so
# that no thread (of Swift's pool or another) is held for one.
for root, _, files in os.walk(targets["EventStorePostgres"]["path"]):
    for f in files:
        if not f.endswith(".swift"):
            continue
        path = os.path.join(root, f)
        for i, line in enumerate(open(path, encoding="utf-8")):
            if re.search(r"\.wait\(\)", line.split("//")[0]):
                problems.append(f"{path}:{i + 1}: a blocking wait on a future; await it instead")

if problems:
    print("import rules broken (ARCHITECTURE.md):")
    for p in problems:
        print("  " + p)
    sys.exit(1)
print(f"import rules hold: {len(targets)} modules under Sources/; the core links no database; "
      "EventStorePostgres has no path to CLMDB")
EOF
