#!/usr/bin/env bash
# Tests the console (GET / of `esctl serve`) in a real headless Chromium: serves a fresh
# temporary store with a token on a free loopback port and runs scripts/console_test.py, which
# drives the page through the Chrome DevTools Protocol (Playwright for Python, with Debian's
# chromium: Playwright's own browser download is not needed) and checks the rendered DOM.
# Installs chromium with apt-get and Playwright from PyPI (into .build/console-venv) when
# missing. Screenshots of each view go to .build/console-screenshots (or $CONSOLE_SCREENSHOTS).
# Exits non-zero on any failed check, any error in the browser's console, or a server that does
# not stop with 0.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/browser-setup.sh
# The same build as `make test`'s (with tests), so that after it this builds nothing.
swift build --build-tests >&2
esctl="$(swift build --show-bin-path)/esctl"
screenshots=${CONSOLE_SCREENSHOTS:-.build/console-screenshots}
mkdir -p "$screenshots"

source scripts/serve-temporary.sh
token=console-test-token-$RANDOM$RANDOM
serve_temporary "$esctl" --token "$token"
echo "console-test.sh: testing the console at $url with $chromium" >&2

status=0
"$browser_python" scripts/console_test.py --url "$url" --token "$token" --esctl "$esctl" --store "$store" \
    --chromium "$chromium" --screenshots "$screenshots" </dev/null || status=$?

stop_served
if [ "$status" -ne 0 ]; then
    echo "console-test.sh: the browser test failed; the server's log:" >&2
    tail -n 40 "$work/serve.err" >&2
    exit "$status"
fi
if [ "$served" -ne 0 ]; then
    echo "console-test.sh: esctl serve exited with $served after SIGTERM, not 0" >&2
    exit 1
fi
echo "console-test.sh: passed; screenshots in $screenshots" >&2
