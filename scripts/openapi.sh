#!/usr/bin/env bash
# Writes docs/openapi.yaml: the OpenAPI document the shipped esctl serves with every seed app
# (GET /openapi.yaml), composed by the server from its generic part
# (Sources/HTTPServer/OpenAPI/openapi.yaml) and the apps' parts (Sources/Apps/Domain/OpenAPI/*.yaml).
# Run it after changing either; ServerTests' document test fails until you do.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product esctl >&2
esctl="$(swift build --show-bin-path)/esctl"
source scripts/serve-temporary.sh
serve_temporary "$esctl" --log-level warning
python3 - "$url/openapi.yaml" docs/openapi.yaml <<'PY'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=30) as response:
    text = response.read()
open(sys.argv[2], "wb").write(text)
PY
stop_served
echo "wrote docs/openapi.yaml" >&2
