#!/usr/bin/env bash
# Attacks a fresh `esctl serve` in bounded loops, as a hostile client or a careless operator
# would, and checks the answers RELIABILITY.md ("The server under attack") promises: descriptor
# exhaustion under a low `ulimit -n`, slow headers, idle connections and dropped waits,
# subscribers that never read on 1 MB events (memory bounded, others served, cut when stalled),
# oversized bodies chunked or not, other sites' pages and DNS rebinding, SIGTERM under load, a
# disk that fills and frees (when a small tmpfs can be mounted), a store deleted while served.
#
#   scripts/abuse-test.sh [--short] [--only NAME,...]
#
# --short runs smaller counts (what `make test` runs). Prints one line per check and the
# figures; exits 1 when a check fails. Standard library Python only (scripts/abuse_test.py).
set -euo pipefail
cd "$(dirname "$0")/.."
# The same build as `make test`'s (with tests), so that after it this builds nothing.
swift build --build-tests >&2
esctl="$(swift build --show-bin-path)/esctl"
exec python3 scripts/abuse_test.py "$esctl" "$@"
