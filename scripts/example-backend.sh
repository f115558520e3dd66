#!/usr/bin/env bash
# Builds the example backend (Examples/Lending: a lending library as an app module, and lendctl,
# esctl carrying it instead of the seed apps), then drives it as a user would: its commands from
# the shell (lendctl app) and over HTTP (lendctl serve), its read model, its console in headless
# Chromium (scripts/console_example_test.py), schemathesis against its own OpenAPI document, and
# checks that none of the seed apps' read models, routes, document paths or console views are there. Exits non-zero on the first
# difference, saying what it was.
# Usage: scripts/example-backend.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# In the root package's .build, reusing what it compiled (scripts/build-example.sh says why and what it costs).
lendctl="$(./scripts/build-example.sh Examples/Lending)/lendctl"

source scripts/serve-temporary.sh
fail() { echo "example-backend.sh: $*" >&2; exit 1; }
shell_store="$work/shell-store"

# From the shell: the read models are the module's and the log summaries, nothing of the seeds.
"$lendctl" init --db "$shell_store" >/dev/null
projections=$("$lendctl" projections --json --db "$shell_store" | python3 -c 'import json,sys; print(",".join(json.loads(l)["name"] for l in sys.stdin))')
[ "$projections" = "shelf,count-by-type,stream-summary" ] || fail "lendctl projections lists $projections"
"$lendctl" app lending add-book '{"isbn":"978-0","title":"Dune"}' --db "$shell_store" >/dev/null
"$lendctl" app lending lend '{"isbn":"978-0","member":"ann"}' --db "$shell_store" >/dev/null
set +e
refused=$("$lendctl" app lending lend '{"isbn":"978-0","member":"bob"}' --db "$shell_store" 2>&1)
status=$?
set -e
[ "$status" = 1 ] && [ "$refused" = "lendctl: The book 978-0 is lent to ann." ] || fail "a second lend answered $status: $refused"
version=$("$lendctl" --version)
[ "$version" = "lendctl 1.0 (an example of the event store's)" ] || fail "lendctl --version says $version"
set +e
usage=$("$lendctl" nosuch 2>&1)
set -e
case "$usage" in "lendctl: Unknown command 'nosuch'."*) ;; *) fail "an unknown command said: $usage" ;; esac
shelf=$("$lendctl" query shelf --json --db "$shell_store")
[ "$shelf" = '[{"isbn":"978-0","title":"Dune","lentTo":"ann"}]' ] || fail "the shelf is $shelf"
set +e
"$lendctl" chat say hi --db "$shell_store" >/dev/null 2>&1
status=$?
set -e
[ "$status" = 64 ] || fail "lendctl chat answered $status, not 64 (no such command)"

# Over HTTP.
serve_temporary "$lendctl" --log-level warning
python3 - "$url" <<'PY'
import json, sys, urllib.error, urllib.request
url = sys.argv[1]
def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
def expect(what, got, wanted):
    if got != wanted:
        sys.exit(f"example-backend.sh: {what}: {got!r}, not {wanted!r}")
status, _ = call("POST", "/apps/lending/add-book", {"isbn": "1", "title": "Emma"})
expect("POST /apps/lending/add-book", status, 201)
status, body = call("POST", "/apps/lending/lend", {"isbn": "1", "member": "cy"})
expect("POST /apps/lending/lend", (status, [e["type"] for e in json.loads(body)]), (201, ["BookLent"]))
status, body = call("POST", "/apps/lending/lend", {"isbn": "1", "member": "di"})
expect("a second lend", (status, json.loads(body)["code"]), (422, "notAvailable"))
status, body = call("POST", "/apps/lending/lend", {"isbn": "1"})
expect("a lend without a member", (status, json.loads(body).get("field")), (400, "member"))
status, body = call("GET", "/projections/shelf?minPosition=2")
expect("GET /projections/shelf", (status, json.loads(body)), (200, [{"isbn": "1", "title": "Emma", "lentTo": "cy"}]))
status, body = call("GET", "/projections/shelf?member=cy")
expect("GET /projections/shelf?member=cy", (status, json.loads(body)), (200, [{"isbn": "1", "title": "Emma", "lentTo": "cy"}]))
status, body = call("GET", "/projections/shelf?member=di")
expect("GET /projections/shelf?member=di", (status, json.loads(body)), (200, []))
status, body = call("GET", "/projections")
expect("GET /projections", sorted(p["name"] for p in json.loads(body)), ["count-by-type", "shelf", "stream-summary"])
for path in ["/apps/chat/say", "/apps/fitness/start", "/chat/say"]:
    expect(f"POST {path}", call("POST", path, {})[0], 404)
expect("GET /chat/room", call("GET", "/chat/room?ann")[0], 404)
status, document = call("GET", "/openapi.yaml")
expect("GET /openapi.yaml", status, 200)
if "/apps/lending/lend:" not in document:
    sys.exit("example-backend.sh: /openapi.yaml has no path /apps/lending/lend")
for word in ["/apps/chat", "/chat/room", "/apps/camp", "/apps/fitness", "/apps/color", "ColorDisplay"]:
    if word in document:
        sys.exit(f"example-backend.sh: /openapi.yaml names {word}")
PY
# Its console: the generic views only, on its own commands and read model.
source scripts/browser-setup.sh
"$browser_python" scripts/console_example_test.py --url "$url" --chromium "$chromium" </dev/null \
    || { tail -n 20 "$work/serve.err" >&2; fail "the console of lendctl failed its browser test"; }
stop_served
[ "$served" = 0 ] || fail "lendctl serve exited $served at SIGTERM"

# Its own document, fuzzed as the shipped esctl's is.
./scripts/schemathesis.sh 10 "$lendctl"
echo "example-backend.sh: lendctl ran its commands from the shell and over HTTP, with none of the seed apps" >&2
