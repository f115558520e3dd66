# Sourced (not run) by the scripts that drive the console in a browser (console-test.sh,
# example-backend.sh): finds Debian's chromium, or installs it with apt-get, and Playwright for
# Python in .build/console-venv (Playwright's own browser download is not needed). Sets
# `chromium` (the browser's path) and `browser_python` (the venv's python).
browser_setup_sudo=
[ "$(id -u)" = 0 ] || browser_setup_sudo=sudo
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
    echo "$(basename "$0"): installing chromium with apt-get" >&2
    $browser_setup_sudo apt-get update -qq </dev/null
    DEBIAN_FRONTEND=noninteractive $browser_setup_sudo apt-get install -y -qq chromium </dev/null >/dev/null
    chromium=$(command -v chromium)
fi
browser_venv=.build/console-venv
if ! "$browser_venv/bin/python" -c 'import playwright' 2>/dev/null; then
    echo "$(basename "$0"): installing Playwright into $browser_venv" >&2
    python3 -m venv "$browser_venv"
    # Pinned: the version the console's tests were checked with.
    "$browser_venv/bin/pip" install --quiet --disable-pip-version-check "playwright==1.65.2" </dev/null
fi
browser_python="$browser_venv/bin/python"
